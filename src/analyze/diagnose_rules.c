/* diagnose_rules.c: the rules of diagnose.h over the per-step breakdown.
 * Shares are taken over the total time of all steps (the Overview's
 * denominator), so a few long steps weigh as much as they cost; medians and
 * the worst steps are given as evidence beside them. */
#include "diagnose.h"

#include <stdlib.h>
#include <string.h>

static const char *const ids[SP__RULE_COUNT] = {
    "dataloader_bound",      "launch_bound",    "sync_bound",
    "communication_bound",   "optimizer_bound", "slow_steps",
    "no_dominant_bottleneck"};
static const char *const titles[SP__RULE_COUNT] = {
    "dataloader-bound",      "host- or launch-bound", "sync-bound",
    "communication-bound",   "optimizer-bound",       "slow steps",
    "no dominant bottleneck"};

const char *sp__rule_id(int rule)
{
    return rule >= 0 && rule < SP__RULE_COUNT ? ids[rule] : "";
}
const char *sp__rule_title(int rule)
{
    return rule >= 0 && rule < SP__RULE_COUNT ? titles[rule] : "";
}

/* The per-step measure each rule sums. */
static int64_t measure(int rule, const sp__step *s)
{
    switch (rule) {
    case SP__RULE_DATALOADER:
        return s->phase_ns[SP__PHASE_DATALOADER];
    case SP__RULE_LAUNCH:
        return s->idle_ns;
    case SP__RULE_SYNC:
        return s->sync_ns;
    case SP__RULE_COMM:
        return s->exposed_comm_ns;
    case SP__RULE_OPTIMIZER:
        return s->phase_ns[SP__PHASE_OPTIMIZATION];
    default:
        return s->end_ns - s->start_ns;
    }
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* The median of the rule's measure (lower middle for an even count). */
static int median_of(const sp__steps *st, int rule, int64_t *out)
{
    int64_t *v = sp__alloc(sizeof *v * st->n);
    if (!v) return -1;
    for (size_t i = 0; i < st->n; i++)
        v[i] = measure(rule, &st->v[i]);
    qsort(v, st->n, sizeof *v, cmp_i64);
    *out = v[(st->n - 1) / 2];
    sp__free(v);
    return 0;
}

/* Fills the verdict's totals, median and worst steps for its rule. */
static int evidence(const sp__steps *st, sp__verdict *v)
{
    v->total_ns = 0;
    for (size_t i = 0; i < st->n; i++)
        v->total_ns += measure(v->rule, &st->v[i]);
    if (median_of(st, v->rule, &v->median_ns) != 0) return -1;
    v->nsteps = 0;
    for (size_t i = 0; i < st->n; i++) { /* insertion into the top SP__DIAG_WORST */
        int64_t x = measure(v->rule, &st->v[i]);
        size_t k = v->nsteps < SP__DIAG_WORST ? v->nsteps++ : SP__DIAG_WORST;
        if (k == SP__DIAG_WORST && x <= v->step_ns[k - 1]) continue;
        if (k == SP__DIAG_WORST) k--;
        while (k > 0 && v->step_ns[k - 1] < x) {
            v->step[k] = v->step[k - 1];
            v->step_ns[k] = v->step_ns[k - 1];
            k--;
        }
        v->step[k] = st->v[i].number;
        v->step_ns[k] = x;
    }
    return 0;
}

static double share(int64_t part, int64_t whole)
{
    return whole > 0 ? (double)part / (double)whole : 0;
}

/* A share rule: fires when its measure is at least threshold of step time. */
static int share_rule(sp__diagnosis *d, int rule, double threshold)
{
    sp__verdict v = {.rule = rule, .threshold = threshold, .name = -1};
    if (evidence(&d->steps, &v) != 0) return -1;
    v.value = v.share = share(v.total_ns, d->total_ns);
    if (v.value >= threshold && v.total_ns > 0) d->v[d->count++] = v;
    return 0;
}

static int launch_rule(sp__diagnosis *d)
{
    if (!d->steps.has_gpu) return 0;
    sp__verdict v = {.rule = SP__RULE_LAUNCH, .threshold = SP__DIAG_IDLE_SHARE, .name = -1};
    if (evidence(&d->steps, &v) != 0) return -1;
    for (size_t i = 0; i < d->steps.n; i++) {
        const sp__step *s = &d->steps.v[i];
        v.kernels += s->kernels;
        v.short_kernels += s->short_kernels;
        v.kernel_ns += s->kernel_ns;
        v.runtime_ns += s->runtime_ns;
    }
    v.value = v.share = share(v.total_ns, d->total_ns);
    if (v.value >= v.threshold && v.total_ns > 0) d->v[d->count++] = v;
    return 0;
}

static int optimizer_rule(sp__diagnosis *d)
{
    sp__verdict v = {.rule = SP__RULE_OPTIMIZER, .threshold = SP__DIAG_OPT_RATIO, .name = -1};
    if (evidence(&d->steps, &v) != 0) return -1;
    int64_t backward = d->phase_total[SP__PHASE_BACKWARD];
    /* value: Optimization against Backward (1 without backward time). */
    v.value = backward > 0 ? share(v.total_ns, backward) : 1.0;
    v.share = share(v.total_ns, d->total_ns);
    if (v.share >= SP__DIAG_OPT_SHARE && v.value >= v.threshold) d->v[d->count++] = v;
    return 0;
}

/* Which phase, and which host range name (by self time), grew most in step
 * `slow` against step `ref`. */
static int what_differs(const sp__model *m, const sp__step *slow, const sp__step *ref,
                        sp__verdict *v)
{
    v->phase = 0;
    v->phase_excess_ns = 0;
    for (int p = 0; p < SP__PHASE_COUNT; p++) {
        int64_t x = slow->phase_ns[p] - ref->phase_ns[p];
        if (p == 0 || x > v->phase_excess_ns) {
            v->phase = p;
            v->phase_excess_ns = x;
        }
    }
    const sp_result *r = m->result;
    size_t names = r->names.count ? r->names.count : 1;
    int64_t *delta = sp__alloc(sizeof *delta * names);
    if (!delta) return -1;
    for (size_t t = 0; t < m->thread_count; t++) {
        const sp__thread_model *tm = &m->threads[t];
        for (size_t k = 0; k < tm->count; k++) {
            const sp__event *e = &tm->thread->events[tm->nodes[k].event];
            if (e->type == SP_EVENT_PROFILE_STEP || e->name >= names) continue;
            if (e->start_ns >= slow->start_ns && e->start_ns < slow->end_ns)
                delta[e->name] += tm->nodes[k].self_cpu;
            else if (e->start_ns >= ref->start_ns && e->start_ns < ref->end_ns)
                delta[e->name] -= tm->nodes[k].self_cpu;
        }
    }
    v->name = -1;
    v->name_excess_ns = 0;
    for (size_t id = 0; id < names; id++)
        if (delta[id] > v->name_excess_ns) {
            v->name = (int64_t)id;
            v->name_excess_ns = delta[id];
        }
    sp__free(delta);
    return 0;
}

static int slow_rule(const sp__model *m, sp__diagnosis *d)
{
    const sp__steps *st = &d->steps;
    if (st->n < SP__DIAG_SLOW_MIN_STEPS || d->median_ns <= 0) return 0;
    sp__verdict v = {.rule = SP__RULE_SLOW_STEPS, .threshold = SP__DIAG_SLOW_FACTOR, .name = -1};
    v.median_ns = d->median_ns;
    size_t slowest = 0, ref = 0;
    int64_t ref_off = 0;
    int64_t first_gap = 0;
    int periodic = 1;
    int64_t prev = -1;
    for (size_t i = 0; i < st->n; i++) {
        int64_t len = st->v[i].end_ns - st->v[i].start_ns;
        int64_t off = len > d->median_ns ? len - d->median_ns : d->median_ns - len;
        if (i == 0 || off < ref_off) { /* the reference: the step nearest the median */
            ref = i;
            ref_off = off;
        }
        if ((double)len <= SP__DIAG_SLOW_FACTOR * (double)d->median_ns) continue;
        if (v.slow_count == 0 || len > st->v[slowest].end_ns - st->v[slowest].start_ns) slowest = i;
        if (v.slow_count < SP__DIAG_SLOW_LISTED) {
            v.step[v.nsteps] = st->v[i].number;
            v.step_ns[v.nsteps++] = len;
        }
        v.total_ns += len - d->median_ns;
        if (prev >= 0) {
            int64_t gap = st->v[i].number - prev;
            if (first_gap == 0)
                first_gap = gap;
            else if (gap != first_gap)
                periodic = 0;
        }
        prev = st->v[i].number;
        v.slow_count++;
    }
    if (v.slow_count == 0) return 0;
    v.value = (double)(st->v[slowest].end_ns - st->v[slowest].start_ns) / (double)d->median_ns;
    v.share = share(v.total_ns, d->total_ns);
    v.period = v.slow_count >= 3 && periodic && first_gap > 1 ? first_gap : 0;
    v.warmup = slowest == 0;
    v.reference_step = st->v[ref].number;
    if (what_differs(m, &st->v[slowest], &st->v[ref], &v) != 0) return -1;
    d->v[d->count++] = v;
    return 0;
}

int sp__diagnose(const sp__model *m, sp__diagnosis *d)
{
    memset(d, 0, sizeof *d);
    if (sp__steps_build(m, &d->steps) != 0) return -1;
    const sp__steps *st = &d->steps;
    if (st->n == 0) return 0;
    for (size_t i = 0; i < st->n; i++) {
        d->total_ns += st->v[i].end_ns - st->v[i].start_ns;
        d->idle_total += st->v[i].idle_ns;
        for (int p = 0; p < SP__PHASE_COUNT; p++)
            d->phase_total[p] += st->v[i].phase_ns[p];
    }
    if (median_of(st, SP__RULE_SLOW_STEPS, &d->median_ns) != 0) return -1;
    if (share_rule(d, SP__RULE_DATALOADER, SP__DIAG_DATALOADER_SHARE) != 0 || launch_rule(d) != 0 ||
        share_rule(d, SP__RULE_SYNC, SP__DIAG_SYNC_SHARE) != 0 ||
        share_rule(d, SP__RULE_COMM, SP__DIAG_COMM_SHARE) != 0 || optimizer_rule(d) != 0 ||
        slow_rule(m, d) != 0)
        return -1;
    if (d->count == 0) {
        sp__verdict v = {.rule = SP__RULE_NONE, .name = -1};
        /* Evidence: the largest phase. */
        for (int p = 0; p < SP__PHASE_COUNT; p++)
            if (d->phase_total[p] > d->phase_total[v.phase]) v.phase = p;
        v.total_ns = d->phase_total[v.phase];
        v.value = v.share = share(v.total_ns, d->total_ns);
        d->v[d->count++] = v;
    }
    return 0;
}

void sp__diagnosis_fini(sp__diagnosis *d)
{
    sp__steps_fini(&d->steps);
}
