/* dump_write.h: writing a dump file's sections (the format of crash.h),
 * shared by the crash handler (crash.c) and the streaming thread
 * (stream.c). Every call is async-signal-safe: no allocation and no locks,
 * only write() and read(); the staging buffer belongs to the caller. */
#ifndef SP_RECORD_DUMP_WRITE_H
#define SP_RECORD_DUMP_WRITE_H

#include "clock.h"
#include "crash.h"
#include "record.h"
#include "threads.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sp__dump_writer {
    int fd;
    int probe[2];      /* a pipe: write() from a pointer tells whether it is readable */
    int failed;        /* a write failed: nothing more is written */
    uint64_t sections; /* written so far, for END and FLUSH */
    char *buf;         /* staging: small pieces gather here */
    size_t cap, len;
} sp__dump_writer;

/* Forgets what was staged and counted (fd, probe and buf stay). */
void sp__dump_reset(sp__dump_writer *w);
void sp__dump_put(sp__dump_writer *w, const void *data, size_t len);
/* Pads a payload of len bytes to 8 bytes. */
void sp__dump_pad(sp__dump_writer *w, size_t len);
/* A section head: type, then the payload's size in bytes. */
void sp__dump_section(sp__dump_writer *w, uint32_t type, uint64_t bytes);
void sp__dump_flush_out(sp__dump_writer *w);
/* The file header: magic, version, header size, byte-order word. */
void sp__dump_header(sp__dump_writer *w);
/* A META section for the span that began at start, reaching now. */
/* The DIST section: d as it is (async-signal-safe). */
void sp__dump_dist_section(sp__dump_writer *w, const sp__dump_dist *d);
void sp__dump_meta_section(sp__dump_writer *w, int64_t signo, int64_t pid, const sp__sync *start,
                           const sp__sync *now, uint64_t flags, const char *process_name);
/* A NAME section: ptr and the text it points to, probed page by page
 * first, so a bad pointer is left out (it loads as "(unknown)") instead of
 * faulting. */
void sp__dump_name(sp__dump_writer *w, uint64_t ptr);

/* A THREAD section for tb; with_counts: its drops and misuse so far in the
 * span (a streamed dump sends them in each MORE section instead). */
void sp__dump_thread_section(sp__dump_writer *w, const sp__tbuf *tb, int with_counts);

/* The static name pointer that record w holds, or 0 (none, or NULL: no
 * text to write either way). */
static inline uint64_t sp__dump_name_of(const sp__word *w)
{
    unsigned kind = SP__REC_KIND(*w);
    if (kind == SP__REC_BEGIN || kind == SP__REC_INSTANT || kind == SP__REC_COUNTER ||
        kind == SP__REC_MEMORY)
        return SP__REC_LOW(*w);
    return 0;
}

#endif
