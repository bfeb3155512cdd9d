/* clock.c: picks the tick source once per process and converts ticks to
 * CLOCK_REALTIME. The TSC is used only when it is invariant (CPUID) and the
 * kernel's clocksource is "tsc", i.e. the kernel itself trusts it; otherwise
 * the hot path reads CLOCK_MONOTONIC_RAW. Rates come from MONOTONIC_RAW, which
 * NTP does not slew; REALTIME only supplies the offset at the later sync
 * point, so a REALTIME step between the two points cannot skew the rate. */
#include "clock.h"
#include "fork.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifdef SP__HAVE_TSC
#include <cpuid.h>
#endif

int sp__clock_tsc;
static sp__sync process_first_sync;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

/* Below this many MONOTONIC_RAW ns between sync points the rate estimate is
 * too coarse; the process's first sync point is used instead. */
#define SP__MIN_RATE_WINDOW_NS 10000000

#ifdef SP__HAVE_TSC
static int cpu_has_invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & (1u << 4))) return 0;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d & (1u << 8)) != 0;
}

static int kernel_clocksource_is_tsc(void)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f) return 0;
    char name[32] = {0};
    int ok = fgets(name, sizeof name, f) != NULL && strncmp(name, "tsc", 3) == 0;
    fclose(f);
    return ok;
}
#endif

static void clock_init_once(void)
{
#ifdef SP__HAVE_TSC
    sp__clock_tsc = cpu_has_invariant_tsc() && kernel_clocksource_is_tsc();
#endif
    sp__clock_sync(&process_first_sync);
    sp__record_fork_init(); /* every path that records or creates a profiler passes here */
}

void sp__clock_init(void) { pthread_once(&clock_once, clock_init_once); }

void sp__clock_sync(sp__sync *out)
{
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t t0 = sp__ticks();
        int64_t raw = (int64_t)sp__clock_raw_ns(CLOCK_MONOTONIC_RAW);
        int64_t real = (int64_t)sp__clock_raw_ns(CLOCK_REALTIME);
        uint64_t t1 = sp__ticks();
        if (t1 - t0 < best_width) {
            best_width = t1 - t0;
            out->ticks = t0 + (t1 - t0) / 2;
            out->raw_ns = raw;
            out->real_ns = real;
        }
    }
}

void sp__clock_map(sp__tick_map *map, const sp__sync *earlier, const sp__sync *later)
{
    const sp__sync *a = earlier;
    if (later->raw_ns - a->raw_ns < SP__MIN_RATE_WINDOW_NS &&
        later->raw_ns - process_first_sync.raw_ns > later->raw_ns - a->raw_ns)
        a = &process_first_sync;
    map->anchor_ticks = later->ticks;
    map->anchor_real_ns = later->real_ns;
    if (later->ticks > a->ticks && later->raw_ns > a->raw_ns)
        map->ns_per_tick = (double)(later->raw_ns - a->raw_ns) / (double)(later->ticks - a->ticks);
    else
        map->ns_per_tick = sp__clock_tsc ? 1.0 / 2.5 : 1.0; /* degenerate: no time passed */
}
