/* throughput_text.h: the Throughput Summary as text (throughput_text.c),
 * for sp_result_summary. The figures themselves are in throughput.h. */
#ifndef SP_ANALYZE_THROUGHPUT_TEXT_H
#define SP_ANALYZE_THROUGHPUT_TEXT_H

#include "throughput.h"

/* Appends the Throughput Summary of t to out, times in time_unit ("s",
 * "ms", "us" or "ns"; NULL: "ms"). Returns 0, or -1 when memory ran out. */
int sp__throughput_render(const sp__throughput *t, const char *time_unit, sp__buf *out);

#endif
