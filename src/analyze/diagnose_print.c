/* diagnose_print.c: sp_result_diagnose, the diagnosis as text for people
 * and as JSON for programs (diagnose.md §3). Both printers take the same
 * evidence sentence, built once per verdict, so the two never disagree.
 * Names from the trace are made safe on the way: invalid UTF-8 becomes
 * U+FFFD and control bytes become '?' in the sentence (and in JSON every
 * string is escaped besides), so no name can break a terminal line or the
 * JSON document. */
#include "diagnose.h"
#include "utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A duration with a unit that keeps 3 or 4 significant digits. */
static void put_time(sp__buf *b, int64_t ns)
{
    double v = (double)ns;
    if (ns < 0) v = -v;
    const char *sign = ns < 0 ? "-" : "";
    if (v < 1e3)
        sp__buf_printf(b, "%s%.0f ns", sign, v);
    else if (v < 1e6)
        sp__buf_printf(b, "%s%.1f us", sign, v / 1e3);
    else if (v < 1e9)
        sp__buf_printf(b, "%s%.2f ms", sign, v / 1e6);
    else
        sp__buf_printf(b, "%s%.2f s", sign, v / 1e9);
}

static void put_pct(sp__buf *b, double share)
{
    sp__buf_printf(b, "%.1f%%", 100.0 * share);
}

/* A name from the trace, cut to 120 bytes, valid UTF-8, no control bytes. */
static void put_name(sp__buf *b, const char *name)
{
    size_t at = b->len;
    sp__utf8_sanitize(b, name, strlen(name), 120);
    if (b->failed) return;
    for (size_t i = at; i < b->len; i++)
        if ((unsigned char)b->data[i] < 0x20 || b->data[i] == 0x7f) b->data[i] = '?';
}

/* "#14 (2.52 ms), #11 (2.50 ms)" */
static void put_steps(sp__buf *b, const sp__verdict *v)
{
    for (size_t i = 0; i < v->nsteps; i++) {
        sp__buf_printf(b, "%s#%" PRId64 " (", i ? ", " : "", v->step[i]);
        put_time(b, v->step_ns[i]);
        sp__buf_putc(b, ')');
    }
}

/* "WHAT 46.5% of step time (threshold 20.0%), ..." with the step-time
 * threshold given (the optimizer's is not its rule's threshold). */
static void put_share_evidence(sp__buf *b, const sp__verdict *v, const char *what, double threshold)
{
    sp__buf_printf(b, "%s ", what);
    put_pct(b, v->share);
    sp__buf_puts(b, " of step time (threshold ");
    put_pct(b, threshold);
    sp__buf_puts(b, "), ");
    put_time(b, v->median_ns);
    sp__buf_puts(b, " per step (median); most in steps ");
    put_steps(b, v);
    sp__buf_putc(b, '.');
}

static void put_slow_evidence(sp__buf *b, const sp__diagnosis *d, const sp__verdict *v,
                              const sp_result *r)
{
    sp__buf_printf(b, "%zu of %zu steps take over %.1fx the median step (", v->slow_count,
                   d->steps.n, v->threshold);
    put_time(b, d->median_ns);
    sp__buf_puts(b, "): ");
    put_steps(b, v);
    if (v->slow_count > v->nsteps) sp__buf_printf(b, " and %zu more", v->slow_count - v->nsteps);
    if (v->period) sp__buf_printf(b, "; periodic, every %" PRId64 " steps", v->period);
    sp__buf_printf(
        b, ". The slowest is %.1fx the median; against step #%" PRId64 " (the median step) ",
        v->value, v->reference_step);
    sp__buf_printf(b, "%s grew most (+", sp__phase_name(v->phase));
    put_time(b, v->phase_excess_ns);
    sp__buf_putc(b, ')');
    if (v->name >= 0) {
        sp__buf_puts(b, ", and the self time of '");
        put_name(b, sp__result_name(r, (uint32_t)v->name));
        sp__buf_puts(b, "' by +");
        put_time(b, v->name_excess_ns);
    }
    sp__buf_putc(b, '.');
    if (v->warmup)
        sp__buf_puts(b, " The slowest is the first recorded step, where warm-up (allocations, "
                        "caches, autotuning, compilation) is usual.");
}

static void put_evidence(sp__buf *b, const sp__diagnosis *d, const sp__verdict *v,
                         const sp_result *r)
{
    switch (v->rule) {
    case SP__RULE_DATALOADER:
        put_share_evidence(b, v, "Dataloader is", v->threshold);
        break;
    case SP__RULE_LAUNCH:
        put_share_evidence(b, v, "The GPU is idle outside data loading for", v->threshold);
        sp__buf_printf(b, " %" PRId64 " kernels, %" PRId64 " (", v->kernels, v->short_kernels);
        put_pct(b, v->kernels ? (double)v->short_kernels / (double)v->kernels : 0);
        sp__buf_puts(b, ") under 10 us; CUDA runtime calls take ");
        put_time(b, v->runtime_ns);
        sp__buf_puts(b, " against ");
        put_time(b, v->kernel_ns);
        sp__buf_puts(b, " of kernel time.");
        break;
    case SP__RULE_SYNC:
        put_share_evidence(b, v, "Waits (synchronize calls, blocking copies, item()) take",
                           v->threshold);
        break;
    case SP__RULE_COMM:
        put_share_evidence(b, v, "Communication not overlapped with computation is", v->threshold);
        break;
    case SP__RULE_OPTIMIZER:
        put_share_evidence(b, v, "Optimization is", SP__DIAG_OPT_SHARE);
        sp__buf_puts(b, " It is ");
        put_pct(b, v->value);
        sp__buf_puts(b, " of Backward's time (threshold ");
        put_pct(b, v->threshold);
        sp__buf_puts(b, ").");
        break;
    case SP__RULE_SLOW_STEPS:
        put_slow_evidence(b, d, v, r);
        break;
    default:
        sp__buf_puts(b, "No rule reached its threshold; the largest part of the step is ");
        sp__buf_printf(b, "%s, ", sp__phase_name(v->phase));
        put_pct(b, v->value);
        sp__buf_puts(b, " of step time.");
        break;
    }
}

static const char *recommendation(const sp__verdict *v)
{
    switch (v->rule) {
    case SP__RULE_DATALOADER:
        return "Load batches ahead of the step: raise the DataLoader's num_workers, set "
               "pin_memory=True, prefetch (prefetch_factor), and move decoding and augmentation "
               "into the workers.";
    case SP__RULE_LAUNCH:
        return "Give the GPU fewer, larger pieces of work: batch small operations (a larger "
               "batch, fused or foreach kernels), capture the step in a CUDA graph or compile it, "
               "and move host work (logging, Python bookkeeping) out of the loop.";
    case SP__RULE_SYNC:
        return "Keep the host from waiting on the device: read losses and metrics every N steps "
               "instead of calling item(), cpu() or print each step, copy with non_blocking=True "
               "from pinned memory, and drop explicit synchronize calls.";
    case SP__RULE_COMM:
        return "Overlap communication with computation: bucket gradients so that all-reduce "
               "runs during backward (DDP's bucket_cap_mb, paddle's fuse_grad_size_in_MB), "
               "accumulate gradients to communicate less often, and check the interconnect.";
    case SP__RULE_OPTIMIZER:
        return "Use a fused or foreach optimizer (torch: fused=True or foreach=True; paddle: "
               "multi_tensor or fused optimizers), and keep parameters in fewer, larger tensors.";
    case SP__RULE_SLOW_STEPS:
        return v->period ? "Periodic spikes point at work done every few steps: checkpointing, "
                           "evaluation, logging or garbage collection; make it asynchronous or "
                           "less frequent."
                         : "Look at the slow steps in a timeline (stepprof convert, then "
                           "Perfetto): one-off slow steps come from warm-up, garbage collection, "
                           "a new input shape (recompilation, autotuning) or I/O; start recording "
                           "after warm-up to leave it out.";
    default:
        return "Nothing stands out: the Operator and Kernel summaries (stepprof summary) show "
               "where the time goes.";
    }
}

/* The drop counters that make figures incomplete, as "name N, ..." ("" none). */
static void put_drops(sp__buf *b, const sp_result *r, int json)
{
    static const sp_counter_kind kinds[] = {SP_COUNTER_HOST_DROPPED, SP_COUNTER_CUPTI_DROPPED,
                                            SP_COUNTER_DISCARDED_RECORDS};
    int any = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        uint64_t n = r->counters[kinds[i]];
        if (!n && !json) continue;
        if (json)
            sp__buf_printf(b, "%s\"%s\": %" PRIu64, any ? ", " : "", sp_counter_name(kinds[i]), n);
        else
            sp__buf_printf(b, "%s%s %" PRIu64, any ? ", " : "", sp_counter_name(kinds[i]), n);
        any = 1;
    }
}

static void print_text(sp__buf *b, const sp__diagnosis *d, const sp_result *r)
{
    const sp__steps *st = &d->steps;
    sp__buf_printf(b, "Diagnosis of %zu step%s (#%" PRId64 " to #%" PRId64 "), median step ", st->n,
                   st->n == 1 ? "" : "s", st->v[0].number, st->v[st->n - 1].number);
    put_time(b, d->median_ns);
    sp__buf_puts(b, "\nStep time: ");
    for (int p = 0; p < SP__PHASE_COUNT; p++) {
        sp__buf_printf(b, "%s%s ", p ? ", " : "", sp__phase_name(p));
        put_pct(b, d->total_ns ? (double)d->phase_total[p] / (double)d->total_ns : 0);
    }
    if (st->has_gpu) {
        sp__buf_puts(b, "; GPU idle outside data loading ");
        put_pct(b, d->total_ns ? (double)d->idle_total / (double)d->total_ns : 0);
    }
    sp__buf_putc(b, '\n');
    size_t before = b->len;
    sp__buf_puts(b, "Caution: events were dropped (");
    size_t mark = b->len;
    put_drops(b, r, 0);
    if (b->len == mark)
        b->len = before;
    else
        sp__buf_puts(b, "): the figures below miss them.\n");
    if (st->n < SP__DIAG_SLOW_MIN_STEPS)
        sp__buf_printf(b, "Note: the slow-step rule needs %d steps; this trace has %zu.\n",
                       SP__DIAG_SLOW_MIN_STEPS, st->n);
    for (size_t i = 0; i < d->count; i++) {
        const sp__verdict *v = &d->v[i];
        sp__buf_printf(b, "\n%s\n  Evidence: ", sp__rule_title(v->rule));
        put_evidence(b, d, v, r);
        sp__buf_printf(b, "\n  Recommendation: %s\n", recommendation(v));
    }
}

/* A JSON string: valid UTF-8, quotes, backslashes and control bytes escaped. */
static void put_json_string(sp__buf *b, const char *s, size_t len)
{
    sp__buf clean;
    sp__buf_init(&clean);
    sp__utf8_sanitize(&clean, s, len, len + 4);
    sp__buf_putc(b, '"');
    for (size_t i = 0; i < clean.len; i++) {
        unsigned char c = (unsigned char)clean.data[i];
        if (c == '"' || c == '\\')
            sp__buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            sp__buf_printf(b, "\\u%04x", c);
        else
            sp__buf_putc(b, (char)c);
    }
    sp__buf_putc(b, '"');
    if (clean.failed) b->failed = 1;
    sp__buf_fini(&clean);
}

static void put_json_share(sp__buf *b, double share)
{
    sp__buf_printf(b, "%.6f", isfinite(share) ? share : 0.0);
}

static void print_verdict_json(sp__buf *b, const sp__diagnosis *d, const sp__verdict *v,
                               const sp_result *r)
{
    sp__buf_printf(b, "{\"id\": \"%s\", \"title\": \"%s\", \"value\": ", sp__rule_id(v->rule),
                   sp__rule_title(v->rule));
    put_json_share(b, v->value);
    sp__buf_puts(b, ", \"threshold\": ");
    put_json_share(b, v->threshold);
    sp__buf_puts(b, ", \"share\": ");
    put_json_share(b, v->share);
    sp__buf_printf(b, ", \"total_ns\": %" PRId64 ", \"median_ns\": %" PRId64 ", \"steps\": [",
                   v->total_ns, v->rule == SP__RULE_NONE ? 0 : v->median_ns);
    for (size_t i = 0; i < v->nsteps; i++)
        sp__buf_printf(b, "%s{\"step\": %" PRId64 ", \"ns\": %" PRId64 "}", i ? ", " : "",
                       v->step[i], v->step_ns[i]);
    sp__buf_puts(b, "]");
    if (v->rule == SP__RULE_LAUNCH)
        sp__buf_printf(b,
                       ", \"kernels\": %" PRId64 ", \"short_kernels\": %" PRId64
                       ", \"kernel_ns\": %" PRId64 ", \"runtime_ns\": %" PRId64,
                       v->kernels, v->short_kernels, v->kernel_ns, v->runtime_ns);
    if (v->rule == SP__RULE_SLOW_STEPS || v->rule == SP__RULE_NONE)
        sp__buf_printf(b, ", \"phase\": \"%s\"", sp__phase_name(v->phase));
    if (v->rule == SP__RULE_SLOW_STEPS) {
        sp__buf_printf(b,
                       ", \"slow_steps\": %zu, \"period\": %" PRId64
                       ", \"reference_step\": %" PRId64 ", \"phase_excess_ns\": %" PRId64
                       ", \"warmup\": %s, \"name\": ",
                       v->slow_count, v->period, v->reference_step, v->phase_excess_ns,
                       v->warmup ? "true" : "false");
        if (v->name >= 0) {
            const char *name = sp__result_name(r, (uint32_t)v->name);
            put_json_string(b, name, strlen(name));
        } else {
            sp__buf_puts(b, "null");
        }
        sp__buf_printf(b, ", \"name_excess_ns\": %" PRId64, v->name_excess_ns);
    }
    sp__buf t;
    sp__buf_init(&t);
    put_evidence(&t, d, v, r);
    sp__buf_puts(b, ", \"evidence\": ");
    put_json_string(b, t.data ? t.data : "", t.len);
    if (t.failed) b->failed = 1;
    sp__buf_fini(&t);
    const char *rec = recommendation(v);
    sp__buf_puts(b, ", \"recommendation\": ");
    put_json_string(b, rec, strlen(rec));
    sp__buf_putc(b, '}');
}

void sp__diagnosis_json(sp__buf *b, const sp__diagnosis *d, const sp_result *r)
{
    const sp__steps *st = &d->steps;
    sp__buf_printf(b,
                   "{\"steps\": %zu, \"first_step\": %" PRId64 ", \"last_step\": %" PRId64
                   ", \"total_ns\": %" PRId64 ", \"median_step_ns\": %" PRId64
                   ", \"has_gpu\": %s,\n",
                   st->n, st->v[0].number, st->v[st->n - 1].number, d->total_ns, d->median_ns,
                   st->has_gpu ? "true" : "false");
    sp__buf_puts(b, " \"phases\": {");
    for (int p = 0; p < SP__PHASE_COUNT; p++) {
        sp__buf_printf(b, "%s\"%s\": {\"ns\": %" PRId64 ", \"share\": ", p ? ", " : "",
                       sp__phase_name(p), d->phase_total[p]);
        put_json_share(b, d->total_ns ? (double)d->phase_total[p] / (double)d->total_ns : 0);
        sp__buf_putc(b, '}');
    }
    sp__buf_puts(b, "},\n \"gpu_idle\": ");
    if (st->has_gpu) {
        sp__buf_printf(b, "{\"ns\": %" PRId64 ", \"share\": ", d->idle_total);
        put_json_share(b, d->total_ns ? (double)d->idle_total / (double)d->total_ns : 0);
        sp__buf_putc(b, '}');
    } else {
        sp__buf_puts(b, "null");
    }
    sp__buf_puts(b, ",\n \"dropped\": {");
    put_drops(b, r, 1);
    sp__buf_puts(b, "},\n \"verdicts\": [");
    for (size_t i = 0; i < d->count; i++) {
        sp__buf_puts(b, i ? ",\n  " : "\n  ");
        print_verdict_json(b, d, &d->v[i], r);
    }
    sp__buf_puts(b, "\n ]}\n");
}

sp_status sp_result_diagnose(const sp_result *r, sp_diagnose_format format, FILE *out)
{
    if (!r || !out)
        return sp__fail(SP_EINVAL, "sp_result_diagnose: result and output are required");
    if (format != SP_DIAGNOSE_TEXT && format != SP_DIAGNOSE_JSON)
        return sp__fail(SP_EINVAL, "sp_result_diagnose: unknown format %d", (int)format);
    sp__model m;
    sp__diagnosis d;
    sp__buf b;
    sp__buf_init(&b);
    sp_status s = SP_OK;
    int built = sp__model_build(&m, r);
    if (built != 0 || sp__diagnose(&m, &d) != 0) {
        if (built == 0) sp__diagnosis_fini(&d);
        sp__model_fini(&m);
        return sp__fail(SP_ENOMEM, "out of memory diagnosing the result");
    }
    if (d.steps.n == 0) {
        s = sp__fail(SP_ENODATA, "no steps recorded (no ProfileStep ranges): diagnose needs at "
                                 "least one step");
    } else {
        if (format == SP_DIAGNOSE_JSON)
            sp__diagnosis_json(&b, &d, r);
        else
            print_text(&b, &d, r);
        if (b.failed)
            s = sp__fail(SP_ENOMEM, "out of memory printing the diagnosis");
        else if (fwrite(b.data, 1, b.len, out) != b.len)
            s = sp__fail(SP_EIO, "cannot write the diagnosis");
    }
    sp__buf_fini(&b);
    sp__diagnosis_fini(&d);
    sp__model_fini(&m);
    return s;
}
