/* crash.h: the crash dump (crash.c) and its file format, which the loader
 * (src/load/load_dump.c) reads back. A dump holds the raw per-thread record
 * words of the span being recorded when the process crashed (or exited
 * without stopping the profiler), plus what is needed to read them in
 * another process: each thread's id, name and base tick count, the text of
 * every static name pointer the words mention, and the tick -> time map.
 *
 * Format (docs/design.md, "Crash dumps"), every integer in the writer's byte
 * order (the header's byte-order word tells a reader with another order):
 *
 *   header   magic "\x7fSPDUMP\n" (8 bytes), u32 version (1), u32 header
 *            bytes (24), u64 byte-order word 0x0102030405060708
 *   sections one after another: u32 type, u32 0, u64 payload bytes, then
 *            the payload padded with zeros to a multiple of 8 bytes:
 *     META   (first, once) sp__dump_meta
 *     DIST   (optional, once, right after META) sp__dump_dist: the rank
 *            metadata; dumps without it load as a single process's
 *     THREAD sp__dump_thread; starts a thread: the WORDS after it are its
 *     WORDS  record words (record.h) of the current thread, whole events;
 *            a thread's WORDS sections concatenated are its events in order
 *     NAME   u64 pointer value, then the text it pointed to (no NUL), cut at
 *            SP__NAME_MAX_BYTES + 1 bytes; absent if it was not readable
 *     END    (last, once) u64 count of the sections before it
 *   and, only in a streamed dump (stream.c, META flag SP__DUMP_STREAMED):
 *     MORE   sp__dump_more, then record words (whole events) of the thread
 *            whose THREAD section was the index-th; appended pass by pass
 *     FLUSH  sp__dump_flush; closes one streaming pass (written before fsync)
 *
 * A file without its END section, or with anything after it, is truncated or
 * corrupt: the loader rejects it. A streamed dump is the exception: it is
 * appended to during the span and has no END (the process was killed, or a
 * crash replaced it with a complete dump), so the loader reads it up to its
 * last FLUSH and ignores a tail that runs past the end of the file. */
#ifndef SP_RECORD_CRASH_H
#define SP_RECORD_CRASH_H

#include "clock.h"

#include <stdint.h>

#define SP__DUMP_MAGIC "\x7fSPDUMP\n"
#define SP__DUMP_MAGIC_BYTES 8
#define SP__DUMP_VERSION 1
#define SP__DUMP_HEADER_BYTES 24
#define SP__DUMP_BYTE_ORDER UINT64_C(0x0102030405060708)

enum sp__dump_section {
    SP__DUMP_META = 1,
    SP__DUMP_THREAD = 2,
    SP__DUMP_WORDS = 3,
    SP__DUMP_NAME = 4,
    SP__DUMP_END = 5,
    SP__DUMP_MORE = 6,
    SP__DUMP_FLUSH = 7,
    SP__DUMP_DIST = 8 /* optional, once, right after META */
};

/* META flag bits (the options recorded in the trace metadata). */
enum {
    SP__DUMP_RECORD_SHAPES = 1,
    SP__DUMP_PROFILE_MEMORY = 2,
    SP__DUMP_WITH_FLOPS = 4,
    SP__DUMP_WITH_STACK = 8,
    SP__DUMP_STREAMED = 16, /* appended during the span: may end without END */
    SP__DUMP_OVERWRITE_OLDEST = 32
};

/* Every field is 8-byte aligned, so the layout has no padding. */
typedef struct sp__dump_meta {
    int64_t signo;          /* the crash signal; 0 when written at exit() */
    int64_t pid;
    uint64_t start_ticks;   /* the span's start */
    uint64_t end_ticks;     /* the moment of the dump: open ranges end here */
    uint64_t anchor_ticks;  /* tick -> CLOCK_REALTIME ns map (clock.h) */
    int64_t anchor_real_ns;
    double ns_per_tick;
    uint64_t flags;         /* SP__DUMP_* option bits */
    uint64_t orphan_dropped;
    char process_name[64];
} sp__dump_meta;

/* Where the span ran (the result's distributedInfo), as the launcher's
 * environment said when the dump was armed; texts NUL-terminated. */
typedef struct sp__dump_dist {
    int64_t rank, world_size, local_rank, local_world_size;
    char hostname[256];
    char job[128];
    char backend[32]; /* the backend the run named, "" when the reader guesses */
} sp__dump_dist;

typedef struct sp__dump_thread {
    uint64_t tid;
    uint64_t base_ticks;    /* time of the event before the first word (ends) */
    uint64_t dropped;       /* events dropped at the cap in the span */
    uint64_t misuse;
    char name[64];          /* NUL-terminated */
} sp__dump_thread;

/* The head of a MORE section (streamed dumps); the words follow it. */
typedef struct sp__dump_more {
    uint64_t thread;        /* 0-based index of the thread's THREAD section */
    uint64_t dropped;       /* the thread's drops in the span so far */
    uint64_t misuse;
} sp__dump_more;

/* A FLUSH section: everything before it is complete and on disk. */
typedef struct sp__dump_flush {
    uint64_t end_ticks;     /* the pass's time: open ranges end here */
    uint64_t anchor_ticks;  /* the tick map of the pass, which replaces META's */
    int64_t anchor_real_ns;
    double ns_per_tick;
    uint64_t sections;      /* count of the sections before it */
} sp__dump_flush;

/* What the dump's META records about the process, taken when arming. */
typedef struct sp__crash_info {
    uint64_t flags;         /* SP__DUMP_* */
    char process_name[64];
    sp__dump_dist dist;
} sp__crash_info;

/* Opens the dump's temporary file in path's directory (unnamed, O_TMPFILE,
 * where the file system allows; else `path` with ".tmpXXXXXX" appended),
 * installs the signal handlers (once per process; they chain to the
 * handlers found then) and the atexit handler (once). Returns 0, or -1 with
 * the reason in why. Re-arming closes the previous file.
 * Threads: not concurrently with the other sp__crash_* calls. */
int sp__crash_arm(const char *path, const sp__crash_info *info, char *why, size_t why_size);

/* Sets the start of the span being recorded (NULL: none; nothing is dumped
 * while there is none). */
void sp__crash_set_span(const sp__sync *start);

/* Closes and removes the temporary file; the handlers stay installed but
 * only pass signals on. */
void sp__crash_disarm(void);

/* Writes the dump now, as at exit() (signo 0) or a signal, and disarms.
 * Returns 0 when a dump was written. Used by the atexit handler and tests. */
int sp__crash_write(int signo);

#endif
