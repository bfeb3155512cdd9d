/* out_behind.h: write-behind for an sp__out (out.c). Declared apart from
 * export.h's output functions because only the protobuf writer uses it. */
#ifndef SP_EXPORT_OUT_BEHIND_H
#define SP_EXPORT_OUT_BEHIND_H

#include "export.h"

/* Lets a thread of o's own write each full buffer while the caller fills
 * the next, from the first flush on; plain output only (for gzip output
 * nothing changes). For a writer whose formatting costs about what write()
 * does, the two then overlap. sp__out_patch, commit and abort wait for the
 * thread; a write error it meets is reported by commit as any other. */
void sp__out_write_behind(sp__out *o);

#endif
