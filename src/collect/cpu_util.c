/* cpu_util.c: samples process and system CPU time at tracer start and stop
 * and turns the pair into the two utilisation figures of semantics.md §8.
 * The collector calls sp__cpu_sample_take right after the tracers start and
 * right after they stop, then sp__cpu_utilization once. Every delta is
 * clamped at 0, so a counter reset or a failed read never yields a negative,
 * nan or infinite value. */
#include "cpu_util.h"
#include "sys.h"

#include <stdio.h>
#include <time.h>

#define STAT_MIN_COUNTERS 8
#define STAT_MAX_COUNTERS 10

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_line_end(char c)
{
    return c == '\0' || c == '\n' || c == '\r';
}

int sp__cpu_parse_stat(const char *text, uint64_t *busy, uint64_t *idle)
{
    uint64_t c[STAT_MAX_COUNTERS];
    int n = 0;
    if (!text || text[0] != 'c' || text[1] != 'p' || text[2] != 'u' || !is_blank(text[3]))
        return -1;
    const char *p = text + 3;
    while (n < STAT_MAX_COUNTERS) {
        while (is_blank(*p)) p++;
        if (is_line_end(*p)) break;
        if (*p < '0' || *p > '9') return -1;
        uint64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            uint64_t d = (uint64_t)(*p - '0');
            if (v > (UINT64_MAX - d) / 10) return -1;
            v = v * 10 + d;
        }
        if (!is_blank(*p) && !is_line_end(*p)) return -1; /* "12abc" */
        c[n++] = v;
    }
    if (n < STAT_MIN_COUNTERS) return -1;
    /* user nice system idle iowait irq softirq steal [guest guest_nice] */
    *busy = c[0] + c[1] + c[2] + c[5] + c[6] + c[7];
    *idle = c[3] + c[4];
    return 0;
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0 || ts.tv_sec < 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sp__cpu_sample_take(sp__cpu_sample *s)
{
    s->ok = 0;
    s->busy = s->idle = 0;
    s->proc_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    s->wall_ns = clock_ns(CLOCK_MONOTONIC);
    /* The "cpu" line holds at most 11 numbers of 20 digits: 1 KiB fits it
     * whole, so a counter is never cut by the buffer. */
    char line[1024];
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return;
    if (fgets(line, sizeof line, f) && sp__cpu_parse_stat(line, &s->busy, &s->idle) == 0)
        s->ok = 1;
    fclose(f);
}

static uint64_t delta(uint64_t before, uint64_t after)
{
    return after > before ? after - before : 0;
}

int sp__cpu_utilization(const sp__cpu_sample *begin, const sp__cpu_sample *end,
                        double *process, double *system)
{
    int unusable = !begin->ok + !end->ok;
    uint64_t d_proc = delta(begin->proc_ns, end->proc_ns);
    uint64_t d_wall = delta(begin->wall_ns, end->wall_ns);
    *process = d_wall ? (double)d_proc / (double)d_wall : 0.0;
    *system = 0.0;
    if (unusable) return unusable;
    uint64_t d_busy = delta(begin->busy, end->busy);
    uint64_t d_idle = delta(begin->idle, end->idle);
    uint64_t total = d_busy + d_idle;
    if (total >= d_busy && total > 0) /* total < d_busy only on 64-bit wrap */
        *system = (double)d_busy / (double)total;
    return 0;
}
