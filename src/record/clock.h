/* clock.h: the recording clock. Hot-path timestamps are raw ticks: the
 * invariant TSC where the kernel also trusts it, else CLOCK_MONOTONIC_RAW
 * nanoseconds. Ticks become CLOCK_REALTIME nanoseconds only at collection,
 * by linear interpolation between two sync points (docs/design.md, "Clock"). */
#ifndef SP_RECORD_CLOCK_H
#define SP_RECORD_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SP__HAVE_TSC 1
#endif

/* Non-zero when ticks are TSC ticks. Written once by sp__clock_init, before
 * any profiler can enable recording, and never again. */
extern int sp__clock_tsc;

static inline uint64_t sp__clock_raw_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t sp__ticks(void)
{
#ifdef SP__HAVE_TSC
    if (__builtin_expect(sp__clock_tsc, 1)) return __rdtsc();
#endif
    return sp__clock_raw_ns(CLOCK_MONOTONIC_RAW);
}

/* A moment seen on three clocks at once. */
typedef struct sp__sync {
    uint64_t ticks;
    int64_t raw_ns;  /* CLOCK_MONOTONIC_RAW: steady, gives the tick rate */
    int64_t real_ns; /* CLOCK_REALTIME: the output time line */
} sp__sync;

/* Maps ticks to CLOCK_REALTIME nanoseconds. */
typedef struct sp__tick_map {
    uint64_t anchor_ticks;
    int64_t anchor_real_ns;
    double ns_per_tick;
} sp__tick_map;

/* Detects the TSC and takes the process's first sync point. Idempotent and
 * thread-safe. */
void sp__clock_init(void);

/* Takes a sync point: the narrowest of several (ticks, clocks, ticks)
 * brackets, paired with the bracket's midpoint. */
void sp__clock_sync(sp__sync *out);

/* Builds the map from two sync points, earlier then later. If they are too
 * close for a good rate, the process's first sync point replaces `earlier`. */
void sp__clock_map(sp__tick_map *map, const sp__sync *earlier, const sp__sync *later);

static inline int64_t sp__clock_to_real(const sp__tick_map *map, uint64_t ticks)
{
    int64_t dt = (int64_t)(ticks - map->anchor_ticks);
    return map->anchor_real_ns + (int64_t)((double)dt * map->ns_per_tick);
}

/* Current CLOCK_REALTIME in nanoseconds. */
static inline int64_t sp__clock_real_now(void)
{
    return (int64_t)sp__clock_raw_ns(CLOCK_REALTIME);
}

#endif
