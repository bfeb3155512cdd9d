/* reader.h: the recording stage's side of the benchmark timer (reader.c). */
#ifndef SP_RECORD_READER_H
#define SP_RECORD_READER_H

#include "record.h"

/* The bit of sp__host_active set while a timed Dataloader range is open on
 * the timer's thread: every range call goes to the library meanwhile. */
#define SP__ACTIVE_READER 8

/* Receives each outermost Dataloader range of the timer's thread:
 * reader_id identifies the loader (its name pointer or name hash),
 * begin_ns/end_ns are CLOCK_MONOTONIC nanoseconds. */
typedef void (*sp__reader_fn)(void *ctx, uint64_t reader_id, int64_t begin_ns, int64_t end_ns);

/* Starts (fn non-NULL) or stops timing Dataloader ranges on the calling
 * thread; sets or clears bit 1 of sp__host_active. */
void sp__reader_watch(sp__reader_fn fn, void *ctx);

/* Called by every begin and end that reaches the library. Return non-zero
 * while a watched Dataloader range is open on this thread, i.e. while every
 * range call of the thread must take the slow path to be counted. */
int sp__reader_on_begin(sp_event_type type, uint64_t reader_id);
int sp__reader_on_end(void);
int sp__reader_is_open(void);

/* A load timed by calls instead of a range, on the calling thread: end
 * feeds the watcher like an outermost Dataloader range of reader_id that
 * began at begin, when this thread is the watched one. A begin inside a
 * watched Dataloader range is not timed (the range is); a second begin
 * restarts the load; an end with no begin does nothing. Neither records an
 * event. Threads: any (each thread has its own open load). */
void sp__reader_load_begin(uint64_t reader_id);
void sp__reader_load_end(void);

#endif
