/* cpu_util.h: process and system CPU utilisation between two samples
 * (semantics.md §8), taken at tracer start and right after the tracers stop
 * (§9: not after flush and tree building). cpu_util.c; Linux only. */
#ifndef SP_COLLECT_CPU_UTIL_H
#define SP_COLLECT_CPU_UTIL_H

#include <stdint.h>

#define SP__CPU_WARN_BEGIN "Failed to read cpu utilization information at record beginning."
#define SP__CPU_WARN_END "Failed to read cpu utilization information at record end."

/* One sample. The process fields come from clock_gettime and are always
 * filled (0 if the clock failed, which then reads as no progress); `ok`
 * covers only the /proc/stat fields. They used to come from times(), whose
 * 10 ms ticks (USER_HZ) made a span of a few ticks read CPU(Process) 0.00
 * for a program that was busy all along (issue 17): nanoseconds do not. */
typedef struct sp__cpu_sample {
    int ok;              /* 0 if /proc/stat could not be read or had < 8 counters */
    uint64_t proc_ns;    /* CPU time of every thread of this process (CLOCK_PROCESS_CPUTIME_ID) */
    uint64_t wall_ns;    /* CLOCK_MONOTONIC */
    uint64_t busy, idle; /* /proc/stat "cpu" line: busy = user+nice+system+irq+softirq+steal,
                            idle = idle+iowait */
} sp__cpu_sample;

/* Parses the first line of /proc/stat text ("cpu  ..."; "cpu" must be followed
 * by a blank, so a per-core "cpu0" line is rejected). Reads up to 10 counters
 * (guest and guest_nice are ignored; anything after the 10th is not looked
 * at). Returns 0 and fills busy/idle, or -1 and leaves them untouched if the
 * line has fewer than 8 counters or is malformed (a field that is not a
 * plain decimal number, or one that overflows 64 bits). Exposed for tests. */
int sp__cpu_parse_stat(const char *text, uint64_t *busy, uint64_t *idle);

/* Reads the two clocks and the first line of /proc/stat (fopen/fgets) into *s.
 * Never fails; an unreadable /proc/stat leaves s->ok = 0. */
void sp__cpu_sample_take(sp__cpu_sample *s);

/* §8: process = d process CPU time / d wall, 0 if d wall == 0, may exceed 1;
 * system = d busy / (d busy + d idle), 0 if that is 0 or if either sample is
 * not ok. A counter that went backwards (reset) counts as a delta of 0, so
 * results are always finite and >= 0, and system <= 1. Returns how many of
 * the two samples were unusable (0, 1 or 2); the caller tells which from
 * begin->ok / end->ok and warns SP__CPU_WARN_BEGIN / SP__CPU_WARN_END. */
int sp__cpu_utilization(const sp__cpu_sample *begin, const sp__cpu_sample *end,
                        double *process, double *system);

#endif
