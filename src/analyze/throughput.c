/* throughput.c: the throughput and efficiency figures of throughput.h, and
 * the table of peak FLOP/s by GPU name. Every division checks its divisor,
 * and every input is bounded (num_samples by the collector and loaders,
 * the options by sp__tput_opts_check, the summed FLOPs by a double), so
 * each figure is finite or -1. */
#include "throughput.h"

#include "steps.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Dense BF16/FP16 tensor-core peaks per GPU, in TFLOP/s, as the vendor's
 * datasheet gives them "without sparsity" (NVIDIA's sheets print the sparse
 * figure, twice this, with an asterisk). A row matches a device name that
 * contains `model` as a whole word (the next character not a letter or a
 * digit, so "A10" does not match "A100" or "A10G") and, when set, `variant`
 * anywhere after it; rows are tried in order, variants first.
 * Sources: NVIDIA H100 Tensor Core GPU datasheet (SXM 989.4, PCIe 756,
 * NVL 835); H200 datasheet (SXM 989, NVL 835); HGX B200 datasheet (2250);
 * A100 datasheet (312, SXM and PCIe); A30 datasheet (165); A40 datasheet
 * (149.7); A10 datasheet (125); L40S datasheet (362.05); L40 datasheet
 * (181); L4 datasheet (121); V100 datasheet (SXM2 125, PCIe 112, V100S
 * 130); T4 datasheet (65, mixed precision); Ada Lovelace architecture
 * whitepaper (RTX 4090: 165.2 with FP32 accumulate); Ampere GA102
 * whitepaper (RTX 3090: 71 with FP32 accumulate). docs/semantics.md §10
 * lists the same rows. */
static const struct peak_row {
    const char *model, *variant, *row;
    double tflops;
} peaks[] = {
    {"GH200", NULL, "GH200", 989.4},
    {"H100", "NVL", "H100 NVL", 835},
    {"H100", "PCIe", "H100 PCIe", 756},
    {"H100", NULL, "H100 SXM", 989.4},
    {"H200", "NVL", "H200 NVL", 835},
    {"H200", NULL, "H200 SXM", 989},
    {"B200", NULL, "B200", 2250},
    {"A100", NULL, "A100", 312},
    {"A30", NULL, "A30", 165},
    {"A40", NULL, "A40", 149.7},
    {"A10", NULL, "A10", 125},
    {"L40S", NULL, "L40S", 362.05},
    {"L40", NULL, "L40", 181},
    {"L4", NULL, "L4", 121},
    {"V100S", NULL, "V100S", 130},
    {"V100", "PCIe", "V100 PCIe", 112},
    {"V100", NULL, "V100 SXM2", 125},
    {"T4", NULL, "T4", 65},
    {"RTX 4090", NULL, "RTX 4090", 165.2},
    {"RTX 3090", NULL, "RTX 3090", 71},
};

/* Case-insensitive strstr. */
static const char *find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return hay;
    }
    return NULL;
}

/* needle in hay as a whole word; the position after it, or NULL. */
static const char *find_word(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *at = find_ci(hay, needle); at; at = find_ci(at + 1, needle)) {
        int left = at == hay || !isalnum((unsigned char)at[-1]);
        if (left && !isalnum((unsigned char)at[n])) return at + n;
    }
    return NULL;
}

double sp__tput_peak_tflops(const char *name, const char **row)
{
    *row = "";
    if (!name) return -1;
    for (size_t i = 0; i < sizeof peaks / sizeof *peaks; i++) {
        const char *after = find_word(name, peaks[i].model);
        if (!after || (peaks[i].variant && !find_ci(after, peaks[i].variant))) continue;
        *row = peaks[i].row;
        return peaks[i].tflops;
    }
    return -1;
}

static const char *bad_option(char *msg, size_t size, const char *what, double v, double max)
{
    snprintf(msg, size, "%s must be a number above 0 and at most %g, not %g", what, max, v);
    return msg;
}

const char *sp__tput_opts_check(const sp__tput_opts *o, char *msg, size_t size)
{
    if (size) msg[0] = '\0';
    if (!o) return NULL;
    const struct {
        const char *what;
        double v, max;
    } f[] = {{"tokens per sample", o->tokens_per_sample, SP__TPUT_MAX_TOKENS},
             {"FLOPs per step", o->flops_per_step, SP__TPUT_MAX_FLOPS},
             {"peak TFLOP/s", o->peak_tflops, SP__TPUT_MAX_PEAK}};
    for (size_t i = 0; i < 3; i++)
        if (f[i].v != 0 && !(f[i].v > 0 && f[i].v <= f[i].max))
            return bad_option(msg, size, f[i].what, f[i].v, f[i].max);
    return NULL;
}

/* The steps as steps.c cuts them (so that the Throughput Summary, the
 * diagnosis and the report count the same steps), each figure unknown. */
static int collect_steps(const sp_result *r, sp__throughput *t, sp__steps *s)
{
    if (sp__steps_collect(r, s) != 0) return -1;
    if (s->n == 0) return 0;
    t->steps = sp__alloc(sizeof *t->steps * s->n);
    if (!t->steps) return -1;
    for (size_t i = 0; i < s->n; i++)
        t->steps[i] = (sp__tput_step){.number = s->v[i].number,
                                      .start_ns = s->v[i].start_ns,
                                      .end_ns = s->v[i].end_ns,
                                      .num_samples = s->v[i].num_samples,
                                      .samples_per_s = -1,
                                      .tokens_per_s = -1,
                                      .flops = -1,
                                      .flops_per_s = -1,
                                      .mfu = -1};
    t->step_count = s->n;
    return 0;
}

/* Sums the recorded FLOPs of the operator records into their steps.
 * Returns 1 when the result holds any, else 0 (steps untouched). */
static int recorded_flops(const sp_result *r, const sp__steps *steps, sp__throughput *t)
{
    int any = 0;
    for (size_t i = 0; i < r->thread_count && !any; i++)
        for (size_t k = 0; k < r->threads[i].op_count && !any; k++)
            any = r->threads[i].ops[k].flops != 0;
    if (!any) return 0;
    for (size_t i = 0; i < t->step_count; i++)
        t->steps[i].flops = 0;
    for (size_t i = 0; i < r->thread_count; i++)
        for (size_t k = 0; k < r->threads[i].op_count; k++) {
            const sp__op_supplement *op = &r->threads[i].ops[k];
            ptrdiff_t s = op->flops ? sp__steps_at(steps, op->ts_ns) : -1;
            if (s >= 0) t->steps[s].flops += (double)op->flops;
        }
    return 1;
}

static const sp__device_props *props_of(const sp_result *r, uint32_t id)
{
    for (size_t i = 0; i < r->device_prop_count; i++)
        if (r->device_props[i].id == id) return &r->device_props[i];
    return NULL;
}

/* Adds one device's table peak; 0, or -1 (with the reason set) when it has
 * no properties or no row. */
static int add_device_peak(sp__throughput *t, const sp__device_props *p)
{
    if (!p) {
        t->peak_unknown = "a device that ran kernels has no device properties in the result";
        return -1;
    }
    const char *row;
    double tflops = sp__tput_peak_tflops(p->name, &row);
    if (t->peak_devices == 0) {
        snprintf(t->device_name, sizeof t->device_name, "%s", p->name);
        t->peak_row = row;
    }
    if (tflops < 0) {
        snprintf(t->device_name, sizeof t->device_name, "%s", p->name);
        t->peak_row = "";
        t->peak_unknown = "the GPU is not in the table of peaks (give the peak TFLOP/s)";
        return -1;
    }
    t->peak_flops = (t->peak_devices ? t->peak_flops : 0) + tflops * 1e12;
    t->peak_devices++;
    return 0;
}

/* The peak from the table: every device that ran kernels (ids in first-seen
 * order), or the first device when no kernel was recorded. */
static void table_peak(const sp_result *r, sp__throughput *t)
{
    if (r->device_prop_count == 0) {
        t->peak_unknown = "the result has no GPU device properties (give the peak TFLOP/s)";
        return;
    }
    uint32_t seen[64];
    size_t nseen = 0;
    for (size_t i = 0; i < r->device_count; i++) {
        const sp__device_rec *d = &r->devices[i];
        if (d->type != SP_EVENT_KERNEL) continue;
        size_t k = 0;
        while (k < nseen && seen[k] != d->device)
            k++;
        if (k < nseen) continue;
        if (nseen == sizeof seen / sizeof *seen) break;
        seen[nseen++] = d->device;
        if (add_device_peak(t, props_of(r, d->device)) != 0) break;
    }
    if (nseen == 0) add_device_peak(t, &r->device_props[0]);
    if (t->peak_unknown) {
        t->peak_flops = -1;
        t->peak_devices = 0;
    }
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

typedef double (*getter)(const sp__tput_step *s);
static double get_len(const sp__tput_step *s)
{
    return (double)(s->end_ns - s->start_ns);
}
static double get_samples(const sp__tput_step *s)
{
    return s->num_samples;
}
static double get_samples_rate(const sp__tput_step *s)
{
    return s->samples_per_s;
}
static double get_tokens_rate(const sp__tput_step *s)
{
    return s->tokens_per_s;
}
static double get_flops(const sp__tput_step *s)
{
    return s->flops;
}
static double get_flops_rate(const sp__tput_step *s)
{
    return s->flops_per_s;
}
static double get_mfu(const sp__tput_step *s)
{
    return s->mfu;
}

/* One figure over the steps that have it (get >= 0): the median of get,
 * and as the mean either the plain mean (num NULL) or the sum of num over
 * the sum of their step times in seconds; the mean is then multiplied by
 * scale (tokens per sample, 1 / peak). */
static int stat_of(const sp__throughput *t, getter get, getter num, double scale,
                   sp__tput_stat *out)
{
    *out = (sp__tput_stat){0, -1, -1};
    double *v = sp__alloc(sizeof *v * (t->step_count ? t->step_count : 1));
    if (!v) return -1;
    double top = 0, time_s = 0;
    for (size_t i = 0; i < t->step_count; i++) {
        const sp__tput_step *s = &t->steps[i];
        double x = get(s);
        if (x < 0) continue;
        v[out->count++] = x;
        top += num ? num(s) : x;
        time_s += get_len(s) / 1e9;
    }
    if (out->count) {
        qsort(v, out->count, sizeof *v, cmp_double);
        size_t h = out->count / 2;
        out->median = out->count % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
        if (!num)
            out->mean = top / (double)out->count * scale;
        else if (time_s > 0)
            out->mean = top / time_s * scale;
    }
    sp__free(v);
    return 0;
}

static void fill_steps(sp__throughput *t, double tokens, double peak)
{
    for (size_t i = 0; i < t->step_count; i++) {
        sp__tput_step *s = &t->steps[i];
        double secs = (double)(s->end_ns - s->start_ns) / 1e9;
        if (secs <= 0) continue; /* a zero-length step has no rate */
        if (s->num_samples >= 0) {
            s->samples_per_s = s->num_samples / secs;
            if (tokens > 0) s->tokens_per_s = s->samples_per_s * tokens;
        }
        if (s->flops >= 0) {
            s->flops_per_s = s->flops / secs;
            if (peak > 0) s->mfu = s->flops_per_s / peak;
        }
    }
}

static void explain(sp__throughput *t)
{
    int samples = 0;
    for (size_t i = 0; i < t->step_count; i++)
        samples |= t->steps[i].num_samples >= 0;
    if (t->step_count == 0)
        t->samples_unknown = t->flops_unknown = "the result has no recorded steps";
    else if (!samples)
        t->samples_unknown = "no step has num_samples (pass the batch size to step())";
    else if (t->samples_per_s.count == 0)
        t->samples_unknown = "every step with num_samples has zero length";
    if (t->tokens_per_s.count == 0)
        t->tokens_unknown =
            t->samples_unknown ? t->samples_unknown : "the tokens per sample were not given";
    if (t->flops_source == SP__TPUT_FLOPS_NONE && !t->flops_unknown)
        t->flops_unknown =
            "no operator record has FLOPs (record with with_flops, or give the FLOPs per step)";
    if (t->mfu.count) return;
    if (t->flops_unknown)
        t->mfu_unknown = t->flops_unknown;
    else if (t->peak_unknown)
        t->mfu_unknown = t->peak_unknown;
    else
        t->mfu_unknown = "every step has zero length";
}

int sp__throughput_build(const sp_result *r, const sp__tput_opts *o, sp__throughput *t)
{
    memset(t, 0, sizeof *t);
    t->peak_flops = t->tokens_per_sample = -1;
    t->peak_row = "";
    char msg[160];
    if (sp__tput_opts_check(o, msg, sizeof msg)) return 1;
    sp__tput_opts none = {0, 0, 0};
    if (!o) o = &none;
    sp__steps steps;
    if (collect_steps(r, t, &steps) != 0) {
        sp__steps_fini(&steps);
        sp__throughput_fini(t);
        return -1;
    }
    if (o->tokens_per_sample > 0) t->tokens_per_sample = o->tokens_per_sample;
    if (o->flops_per_step > 0) {
        t->flops_source = SP__TPUT_FLOPS_GIVEN;
        for (size_t i = 0; i < t->step_count; i++)
            t->steps[i].flops = o->flops_per_step;
    } else if (r && recorded_flops(r, &steps, t)) {
        t->flops_source = SP__TPUT_FLOPS_RECORDED;
    }
    sp__steps_fini(&steps);
    if (o->peak_tflops > 0) {
        t->peak_flops = o->peak_tflops * 1e12;
        t->peak_given = 1;
    } else if (r) {
        table_peak(r, t);
    } else {
        t->peak_unknown = "the result has no GPU device properties (give the peak TFLOP/s)";
    }
    fill_steps(t, t->tokens_per_sample, t->peak_flops);
    double tokens = t->tokens_per_sample > 0 ? t->tokens_per_sample : 1;
    double inv_peak = t->peak_flops > 0 ? 1 / t->peak_flops : 0;
    int rc = stat_of(t, get_len, NULL, 1, &t->step_ns);
    rc |= stat_of(t, get_samples_rate, get_samples, 1, &t->samples_per_s);
    rc |= stat_of(t, get_tokens_rate, get_samples, tokens, &t->tokens_per_s);
    rc |= stat_of(t, get_flops, NULL, 1, &t->flops);
    rc |= stat_of(t, get_flops_rate, get_flops, 1, &t->flops_per_s);
    rc |= stat_of(t, get_mfu, get_flops, inv_peak, &t->mfu);
    if (rc) {
        sp__throughput_fini(t);
        return -1;
    }
    explain(t);
    return 0;
}

void sp__throughput_fini(sp__throughput *t)
{
    if (!t) return;
    sp__free(t->steps);
    t->steps = NULL;
    t->step_count = 0;
}
