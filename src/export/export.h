/* export.h: what the export stage offers the API layer: writing a result as
 * Chrome-trace JSON, file sinks that appear atomically, and a background
 * writer thread. */
#ifndef SP_EXPORT_H
#define SP_EXPORT_H

#include "collect.h"

/* A file being written: output accumulates in buf and is flushed to a
 * temporary file next to the target, renamed over it by sp__out_commit. */
typedef struct sp__out sp__out;

sp_status sp__out_open(sp__out **out, const char *path, int gzip);
/* The buffer to append to; flush it with sp__out_maybe_flush. */
sp__buf *sp__out_buf(sp__out *o);
/* Writes the buffer out once it holds more than a chunk's worth. */
void sp__out_maybe_flush(sp__out *o);
/* Plain output only: the offset the next byte appended will have, and an
 * overwrite of n bytes already appended at offset at (in the buffer or the
 * file). sp__out_patch returns 0, or -1 (gzip output, a range not yet
 * written, a write error). */
uint64_t sp__out_tell(const sp__out *o);
int sp__out_patch(sp__out *o, uint64_t at, const void *bytes, size_t n);
/* Flushes, closes and renames into place; frees o. On failure the temporary
 * file is removed and the target is untouched. */
sp_status sp__out_commit(sp__out *o);
/* Abandons the file; frees o. */
void sp__out_abort(sp__out *o);
/* For bench_export only: nonzero makes later gzip outputs go through zlib at
 * level 6, as before igzip, so that one run measures both. Set it before
 * any export starts. */
extern int sp__gzip_baseline;

/* Writes r to path as paddle's NodeTreesProto (protobuf.c). */
sp_status sp__export_protobuf(const sp_result *r, const char *path);
/* Writes the n ranks' results of a merged trace to path as one
 * NodeTreesProto (trace-format.md §13): each rank's thread trees tagged
 * with its rank and its root fields in stepprof_ranks; the root itself is
 * the first rank's, with every rank's counters summed. */
sp_status sp__export_protobuf_ranks(const sp_result *const *rs, size_t n, const char *path);

/* Writes r to path in format (AUTO picks by suffix). */
sp_status sp__export(const sp_result *r, const char *path, sp_format format);

/* Creates a directory and its parents (like mkdir -p). */
sp_status sp__mkdirs(const char *dir);

/* The process-wide base time of trace-format.md §3: epoch ns floored to a
 * 7,889,238 s interval, computed once. */
int64_t sp__base_time_ns(void);

/* Background writer: runs jobs in order on its own thread, exports and
 * any other work that must leave the training thread (a span's collection,
 * src/api/span_jobs.c). Each job gets a ticket, increasing from 1, so that a
 * caller can wait for one job without waiting for those queued behind it. */
typedef struct sp__writer sp__writer;
typedef void (*sp__writer_log_fn)(void *ctx, const char *message);
sp_status sp__writer_create(sp__writer **out, sp__writer_log_fn log, void *log_ctx);
/* Queues an export of r (retained until written) to path. */
sp_status sp__writer_submit(sp__writer *w, const sp_result *r, const char *path, sp_format format);
/* A job: run(ctx) on the writer thread, then done(ctx) (may be NULL). A
 * status other than SP_OK is kept as an export failure is (sp__writer_wait),
 * with sp_last_error()'s message of the writer thread. */
typedef sp_status (*sp__writer_job_fn)(void *ctx);
/* Queues run(ctx); *ticket (may be NULL) receives its ticket. On failure
 * (out of memory) nothing is queued and done(ctx) has not been called. */
sp_status sp__writer_call(sp__writer *w, sp__writer_job_fn run, void (*done)(void *ctx), void *ctx,
                          uint64_t *ticket);
/* Whether the job with ticket t has finished; waits for it first if wait. */
int sp__writer_reached(sp__writer *w, uint64_t t, int wait);
/* Waits until every queued job is done; returns SP_EIO if any failed since
 * the last wait (the message names the first failed file). */
sp_status sp__writer_wait(sp__writer *w);
void sp__writer_destroy(sp__writer *w);

#endif
