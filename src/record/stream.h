/* stream.h: the streaming mode of the crash dump (stream.c,
 * sp_options.stream_to_disk): during a recorded span a background thread
 * appends what the recording threads published to a streamed dump at the
 * crash path, about once a second, so that a SIGKILL loses at most about a
 * second of events. Format: crash.h (META flag SP__DUMP_STREAMED, MORE and
 * FLUSH sections). */
#ifndef SP_RECORD_STREAM_H
#define SP_RECORD_STREAM_H

#include "crash.h"
#include "record.h"

#include <stddef.h>

/* Milliseconds between two streaming passes. */
#define SP__STREAM_PERIOD_MS 1000

/* Creates the streamed dump at `path` (a temporary beside it, renamed into
 * place once it holds its header, META and a first FLUSH) and starts the
 * streaming thread for the span that started at `start`. The recording
 * buffers must not be drained until sp__stream_stop: the thread reads them
 * without a lock. Returns 0, or -1 with the reason in why. A running stream
 * is stopped first.
 * Threads: not concurrently with sp__stream_stop. */
int sp__stream_start(const char *path, const sp__crash_info *info, const sp__sync *start, char *why,
                     size_t why_size);

/* Stops and joins the streaming thread, then removes the streamed dump
 * (unless a crash dump has replaced it at the path since). Does nothing if
 * no stream runs; in a forked child it only forgets the parent's stream.
 * Threads: not concurrently with sp__stream_start. */
void sp__stream_stop(void);

/* ring.c, with the registry lock held: `chunk` of tb, whose successor is
 * `next`, is about to be reused; a stream cursor inside it moves to the
 * start of `next` (the words it had not copied are lost, and counted as
 * overwritten), and this waits for a copy of it in progress. */
void sp__stream_forget_chunk(const sp__tbuf *tb, const sp__chunk *chunk, sp__chunk *next);

/* Runs one streaming pass now, as the thread does each period (tests).
 * Returns 0 when the pass is on disk. */
int sp__stream_flush(void);

#endif
