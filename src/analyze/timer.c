/* timer.c: one timer_only benchmark event (semantics.md §7), fed by the
 * profiler's start/step/reader calls with times it read itself, and rendered
 * as paddle's step_info string and Perf Summary. Invariant: the records hold
 * exactly steps 11..N, so every Perf Summary average divides by R = N - 10.
 *
 * Where paddle's timer.py is wrong, this follows §9 instead:
 * - min and max are updated independently (paddle's "if greater ... elif
 *   smaller" left min at inf when the first value was the largest);
 * - reader, batch and ips records all start at step 11 (paddle's batch
 *   records started at step 10, N - 9 values divided by N - 10);
 * - samples/s and steps/s records are kept apart, so an event that switched
 *   to steps/s reports steps/s values only.
 * Every division by a time guards a zero time and gives 0 instead. */
#include "timer.h"

#include <stdio.h>
#include <string.h>

#define SKIP_STEPS 10 /* steps 1..10 are warm-up: averaged, never recorded */
#define NS_PER_S 1e9

static void cost_add(sp__timer_cost *c, int64_t ns)
{
    if (c->count == 0 || ns < c->min_ns) c->min_ns = ns;
    if (c->count == 0 || ns > c->max_ns) c->max_ns = ns;
    c->total_ns += ns;
    c->count++;
}

static void rate_add(sp__timer_rate *r, double v)
{
    if (r->count == 0 || v < r->min) r->min = v;
    if (r->count == 0 || v > r->max) r->max = v;
    r->count++;
}

/* count per second over ns nanoseconds; 0 for a zero time (never inf/nan). */
static double per_second(double count, int64_t ns)
{
    return ns == 0 ? 0.0 : count * NS_PER_S / (double)ns;
}

static double seconds(int64_t ns)
{
    return (double)ns / NS_PER_S;
}

/* Mean of a sum of nanoseconds over n values, in seconds; 0 when n is 0. */
static double mean_s(int64_t total_ns, int64_t n)
{
    return n == 0 ? 0.0 : (double)total_ns / (double)n / NS_PER_S;
}

void sp__timer_start(sp__timer *t, int64_t now_ns)
{
    memset(t, 0, sizeof *t);
    t->step_start_ns = now_ns;
}

void sp__timer_reader(sp__timer *t, uint64_t reader_id, int64_t cost_ns, int64_t now_ns)
{
    /* paddle's check_if_need_record, then after_reader. */
    if (!t->paused) {
        if (!t->reader_bound) {
            t->reader_bound = 1;
            t->reader_id = reader_id;
        } else if (reader_id != t->reader_id) {
            t->paused = 1; /* another loop (e.g. evaluation) without its own start() */
            return;
        }
    } else {
        if (reader_id != t->reader_id) return;
        t->paused = 0;
        t->step_start_ns = now_ns;
    }
    if (cost_ns == 0) return;
    t->win_reader_ns += cost_ns;
    t->win_reader_count++;
    /* Read during step N + 1: recorded from step 11 on. */
    if (t->steps >= SKIP_STEPS) cost_add(&t->reader, cost_ns);
}

void sp__timer_step(sp__timer *t, int64_t now_ns, int64_t num_samples)
{
    if (t->paused) return;
    if (num_samples < 0) t->steps_mode = 1;
    int64_t batch_ns = now_ns - t->step_start_ns;
    t->win_batch_ns += batch_ns;
    t->win_batch_count++;
    if (num_samples > 0) t->win_samples += num_samples;
    t->steps++;
    if (t->steps > SKIP_STEPS) {
        cost_add(&t->batch, batch_ns);
        if (!t->steps_mode) {
            t->total_samples += num_samples;
            rate_add(&t->ips_samples, per_second((double)num_samples, batch_ns));
        }
        rate_add(&t->ips_steps, per_second(1.0, batch_ns));
    }
    t->step_start_ns = now_ns;
}

/* Remembers "<unit>/s" for the Perf Summary, cutting a long unit at a UTF-8
 * character boundary so the stored text stays valid. */
static void remember_unit(sp__timer *t, const char *unit)
{
    size_t n = strlen(unit);
    if (n > SP__TIMER_UNIT_MAX) {
        n = SP__TIMER_UNIT_MAX;
        while (n > 0 && ((unsigned char)unit[n] & 0xC0) == 0x80) n--;
    }
    memcpy(t->unit, unit, n);
    memcpy(t->unit + n, "/s", 3);
}

void sp__timer_step_info(sp__timer *t, const char *unit, sp__buf *out)
{
    if (!unit) unit = "samples";
    double reader_avg = mean_s(t->win_reader_ns, t->win_reader_count);
    double batch_avg = mean_s(t->win_batch_ns, t->win_batch_count);
    double ips;
    if (t->steps_mode)
        ips = per_second((double)t->win_batch_count, t->win_batch_ns);
    else
        ips = per_second((double)t->win_samples, t->win_batch_ns);

    if (reader_avg != 0) sp__buf_printf(out, " reader_cost: %.5f s", reader_avg);
    if (batch_avg != 0) {
        remember_unit(t, unit); /* shown only in samples mode (steps/s is sticky) */
        sp__buf_printf(out, " batch_cost: %.5f s", batch_avg);
    }
    /* ips != 0 implies a non-zero batch time, so the unit was just chosen. */
    if (ips != 0) {
        if (t->steps_mode)
            sp__buf_printf(out, " ips: %.3f steps/s", ips);
        else
            sp__buf_printf(out, " ips: %.3f %s/s", ips, unit);
    }
    t->win_reader_ns = t->win_reader_count = 0;
    t->win_batch_ns = t->win_batch_count = t->win_samples = 0;
}

void sp__center15(sp__buf *out, const char *text)
{
    size_t len = strlen(text);
    size_t pad = len < 15 ? 15 - len : 0;
    /* Python's str.center: left = pad / 2 + (pad & width & 1), width 15. */
    size_t left = pad / 2 + (pad & 1);
    for (size_t i = 0; i < left; i++) sp__buf_putc(out, ' ');
    sp__buf_append(out, text, len);
    for (size_t i = left; i < pad; i++) sp__buf_putc(out, ' ');
}

/* One `| c(label) | c(avg) | c(max) | c(min) |` line; NULL values give the
 * header's labels ("avg", "max", "min"). */
static void table_row(sp__buf *out, const char *label, const double *vals)
{
    static const char *const heads[3] = {"avg", "max", "min"};
    char cell[320]; /* room for any double: "%.5f" of -DBL_MAX is 316 bytes */
    sp__buf_puts(out, "| ");
    sp__center15(out, label);
    for (int i = 0; i < 3; i++) {
        sp__buf_puts(out, " | ");
        if (vals)
            snprintf(cell, sizeof cell, "%.5f", vals[i]);
        else
            snprintf(cell, sizeof cell, "%s", heads[i]);
        sp__center15(out, cell);
    }
    sp__buf_puts(out, " |\n");
}

void sp__timer_perf_summary(const sp__timer *t, sp__buf *out)
{
    if (t->steps <= SKIP_STEPS) return;
    int64_t r = t->steps - SKIP_STEPS; /* == t->batch.count */
    double reader_avg = mean_s(t->reader.total_ns, r);
    double batch_avg = mean_s(t->batch.total_ns, r);
    const sp__timer_rate *rate = t->steps_mode ? &t->ips_steps : &t->ips_samples;
    double ips_avg = t->steps_mode ? per_second((double)r, t->batch.total_ns)
                                   : per_second((double)t->total_samples, t->batch.total_ns);
    double ratio = batch_avg == 0 ? 0.0 : 100.0 * reader_avg / batch_avg;
    const char *unit = t->steps_mode ? "steps/s" : t->unit[0] ? t->unit : "samples/s";

    sp__buf_puts(out, "============================================Perf Summary"
                      "============================================\n");
    if (ratio != 0) sp__buf_printf(out, "Reader Ratio: %.3f%%\n", ratio);
    sp__buf_printf(out, "Time Unit: s, IPS Unit: %s\n", unit);
    table_row(out, "", NULL);
    if (reader_avg != 0) {
        double v[3] = {reader_avg, 0.0, 0.0};
        if (t->reader.count > 0) {
            v[1] = seconds(t->reader.max_ns);
            v[2] = seconds(t->reader.min_ns);
        }
        table_row(out, "reader_cost", v);
    }
    double b[3] = {batch_avg, seconds(t->batch.max_ns), seconds(t->batch.min_ns)};
    table_row(out, "batch_cost", b);
    double s[3] = {ips_avg, rate->count ? rate->max : 0.0, rate->count ? rate->min : 0.0};
    table_row(out, "ips", s);
}

void sp__timer_perf_throughput(const sp__timer *t, double tokens_per_sample, double flops_per_step,
                               double peak_tflops, sp__buf *out)
{
    if (t->steps <= SKIP_STEPS) return;
    int64_t r = t->steps - SKIP_STEPS;
    /* tokens/s needs the samples; steps/s mode means some step had none. */
    if (tokens_per_sample > 0 && !t->steps_mode) {
        const sp__timer_rate *rate = &t->ips_samples;
        double v[3] = {per_second((double)t->total_samples, t->batch.total_ns) * tokens_per_sample,
                       rate->count ? rate->max * tokens_per_sample : 0.0,
                       rate->count ? rate->min * tokens_per_sample : 0.0};
        table_row(out, "tokens/s", v);
    }
    if (!(flops_per_step > 0)) return;
    /* The fastest step gives the largest FLOP/s, the slowest the smallest. */
    double f[3] = {per_second((double)r * flops_per_step, t->batch.total_ns) / 1e12,
                   per_second(flops_per_step, t->batch.min_ns) / 1e12,
                   per_second(flops_per_step, t->batch.max_ns) / 1e12};
    table_row(out, "TFLOP/s", f);
    if (!(peak_tflops > 0)) return;
    double m[3] = {100 * f[0] / peak_tflops, 100 * f[1] / peak_tflops, 100 * f[2] / peak_tflops};
    table_row(out, "MFU (%)", m);
}

int64_t sp__timer_steps(const sp__timer *t)
{
    return t->steps;
}
