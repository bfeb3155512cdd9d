/* ranks.c: the cross-rank view of ranks.h. Each rank's steps come from
 * steps.c, so a rank's phases are cut as `stepprof diagnose` cuts them.
 *
 * Decisions:
 * - Communication: a rank's GPU communication kernels when it has any,
 *   else its host Communication ranges.
 * - Compute, host side (a rank without device records): its Operator
 *   ranges that are not inside a Communication range, when it has
 *   Operator ranges (torch and paddle record every op, so an op running
 *   while another thread communicates is overlap); otherwise its Forward,
 *   Backward and Optimization time outside communication (a program that
 *   marks phases only, where a collective called inside Backward blocks
 *   it).
 * - A rank's figures are means over its own steps; a step is matched
 *   across ranks by its number (ProfileStep#N).
 * - The straggler of an operation is the rank with the shortest duration
 *   (ties: the lowest rank). Its phase is the one of the step the
 *   operation starts in that exceeds, by the most, the other ranks' median
 *   for the step of the same number; none when no phase exceeds it. */
#include "ranks.h"

#include "summary.h"

#include <stdlib.h>
#include <string.h>

typedef struct coll {
    int64_t start, end;
    uint32_t name;       /* the collective's name (its record's, else the range's) */
    const char *group;   /* its record's process group; "" without one */
    int64_t seq, bytes;  /* from its record; -1 unknown */
} coll;

typedef struct rank_data {
    const sp_result *r;
    int64_t rank;
    sp__model m;
    sp__steps s;
    int built, stepped;
    coll *colls;
    size_t ncolls;
    int recorded; /* its collectives come from records that all have a seq */
} rank_data;

static int by_rank(const void *a, const void *b)
{
    const rank_data *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int coll_by_start(const void *a, const void *b)
{
    const coll *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted in place); 0 for n == 0. */
static double median(double *v, size_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int inside_comm(const sp__thread *t, const sp__event *e)
{
    for (int32_t p = e->parent; p >= 0 && (size_t)p < t->count; p = t->events[p].parent)
        if (t->events[p].type == SP_EVENT_COMMUNICATION) return 1;
    return 0;
}

/* A rank's collectives: the Communication ranges that carry a collective
 * record (sp_profiler_add_comm_info, torch's c10d ops) when it has any,
 * else its outermost Communication ranges; in start order. */
static int gather_colls(rank_data *d)
{
    const sp_result *r = d->r;
    size_t n = 0, records = 0;
    for (size_t t = 0; t < r->thread_count; t++) {
        for (size_t k = 0; k < r->threads[t].count; k++)
            n += r->threads[t].events[k].type == SP_EVENT_COMMUNICATION;
        for (size_t k = 0; k < r->threads[t].comm_count; k++)
            records += r->threads[t].comms[k].host >= 0;
    }
    d->colls = sp__alloc(sizeof *d->colls * (n + records ? n + records : 1));
    if (!d->colls) return -1;
    d->recorded = records > 0;
    for (size_t t = 0; t < r->thread_count; t++) {
        const sp__thread *th = &r->threads[t];
        if (records) {
            for (size_t k = 0; k < th->comm_count; k++) {
                const sp__comm *c = &th->comms[k];
                if (c->host < 0 || (size_t)c->host >= th->count) continue;
                const sp__event *e = &th->events[c->host];
                const char *name = sp__result_name(r, c->collective);
                d->colls[d->ncolls++] = (coll){e->start_ns, e->end_ns, *name ? c->collective : e->name,
                                               sp__result_name(r, c->group), c->seq, c->bytes};
                if (c->seq < 0) d->recorded = 0;
            }
            continue;
        }
        for (size_t k = 0; k < th->count; k++) {
            const sp__event *e = &th->events[k];
            if (e->type != SP_EVENT_COMMUNICATION || sp__event_is_mark(e) || inside_comm(th, e)) continue;
            d->colls[d->ncolls++] = (coll){e->start_ns, e->end_ns, e->name, "", -1, -1};
        }
    }
    qsort(d->colls, d->ncolls, sizeof *d->colls, coll_by_start);
    return 0;
}

static int coll_by_group_seq(const void *a, const void *b)
{
    const coll *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    if (c) return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The collective of d with this group and seq, or NULL (d sorted by them). */
static const coll *find_coll(const rank_data *d, const coll *key)
{
    return bsearch(key, d->colls, d->ncolls, sizeof *d->colls, coll_by_group_seq);
}

/* Host compute spans (see the decisions above), merged. */
static int host_compute(const sp__model *m, const sp__spans *comm, sp__spans *out)
{
    const sp_result *r = m->result;
    int ops = 0;
    for (size_t t = 0; t < r->thread_count; t++) {
        const sp__thread *th = &r->threads[t];
        for (size_t k = 0; k < th->count; k++) {
            const sp__event *e = &th->events[k];
            if (e->type != SP_EVENT_OPERATOR || sp__event_is_mark(e) || inside_comm(th, e)) continue;
            sp__spans_add(out, e->start_ns, e->end_ns);
            ops = 1;
        }
    }
    if (ops) {
        sp__spans_merge(out);
        return out->failed ? -1 : 0;
    }
    sp__spans phases;
    sp__spans_init(&phases);
    int rc = sp__spans_union(&phases, &m->cpu_ranges[SP_EVENT_FORWARD], &m->cpu_ranges[SP_EVENT_BACKWARD]);
    if (rc == 0) rc = sp__spans_union(&phases, &phases, &m->cpu_ranges[SP_EVENT_OPTIMIZATION]);
    if (rc == 0) rc = sp__spans_subtract(out, &phases, comm);
    sp__spans_fini(&phases);
    return rc;
}

/* Fills row with d's per-step means. */
static int rank_figures(const rank_data *d, sp__rank_row *row)
{
    enum { COMM, GPU_COMM, COMP, OVER, BUSY, TMP, N };
    sp__spans l[N];
    for (int i = 0; i < N; i++)
        sp__spans_init(&l[i]);
    const sp__model *m = &d->m;
    int rc = sp__summary_gpu_split(m, &l[GPU_COMM], &l[COMP]);
    /* A rank whose collectives run as GPU kernels communicates on the GPU:
     * its host ranges around them only enqueue (HTA counts the same). */
    if (rc == 0 && l[GPU_COMM].n) rc = sp__spans_union(&l[COMM], &l[COMM], &l[GPU_COMM]);
    else if (rc == 0) rc = sp__summary_cpu_comm(m, &l[COMM]);
    if (rc == 0 && !d->s.has_gpu) {
        sp__spans_fini(&l[COMP]);
        rc = host_compute(m, &l[COMM], &l[COMP]);
    }
    if (rc == 0) {
        sp__spans_merge(&l[COMP]);
        rc = sp__spans_intersect(&l[OVER], &l[COMM], &l[COMP]);
    }
    if (rc == 0) rc = sp__spans_union(&l[BUSY], &l[COMM], &l[COMP]);
    if (rc == 0) rc = sp__spans_union(&l[BUSY], &l[BUSY], &m->cpu_ranges[SP_EVENT_DATALOADER]);
    *row = (sp__rank_row){.rank = d->rank, .steps = d->s.n, .collectives = d->ncolls};
    for (size_t i = 0; rc == 0 && i < d->s.n; i++) {
        const sp__step *st = &d->s.v[i];
        int64_t a = st->start_ns, z = st->end_ns;
        int64_t comm = sp__spans_within(&l[COMM], a, z), over = sp__spans_within(&l[OVER], a, z);
        row->step_ns += (double)(z - a);
        row->comm_ns += (double)comm;
        row->compute_ns += (double)sp__spans_within(&l[COMP], a, z);
        row->overlap_ns += (double)over;
        row->exposed_ns += (double)(comm - over);
        row->idle_ns += (double)(z - a - sp__spans_within(&l[BUSY], a, z));
    }
    if (d->s.n) {
        double n = (double)d->s.n;
        row->step_ns /= n;
        row->compute_ns /= n;
        row->comm_ns /= n;
        row->overlap_ns /= n;
        row->exposed_ns /= n;
        row->idle_ns /= n;
    }
    for (int i = 0; i < N; i++)
        sp__spans_fini(&l[i]);
    return rc;
}

/* The step of s with this number, or NULL. */
static const sp__step *step_numbered(const sp__steps *s, int64_t number)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].number == number) return &s->v[i];
    return NULL;
}

/* The phase in which rank `who` fell behind in step `st`, and by how much. */
static int behind_phase(const rank_data *d, size_t n, size_t who, const sp__step *st, double *scratch,
                        double *excess)
{
    int best = -1;
    *excess = 0;
    for (int p = 0; p < SP__PHASE_COUNT; p++) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++) {
            const sp__step *o = j == who ? NULL : step_numbered(&d[j].s, st->number);
            if (o) scratch[k++] = (double)o->phase_ns[p];
        }
        if (k == 0) continue;
        double e = (double)st->phase_ns[p] - median(scratch, k);
        if (e > *excess) {
            *excess = e;
            best = p;
        }
    }
    return best;
}

static sp__straggler_row *straggler_row(sp__ranks *out, int64_t rank, int phase)
{
    for (size_t i = 0; i < out->nstrag; i++)
        if (out->strag[i].rank == rank && out->strag[i].phase == phase) return &out->strag[i];
    sp__straggler_row *v = sp__realloc(out->strag, sizeof *v * (out->nstrag + 1));
    if (!v) return NULL;
    out->strag = v;
    v[out->nstrag] = (sp__straggler_row){.rank = rank, .phase = phase};
    return &v[out->nstrag++];
}

static sp__collective_row *collective_row(sp__ranks *out, const sp_result *r, uint32_t name)
{
    const char *s = sp__result_name(r, name);
    for (size_t i = 0; i < out->ncolls; i++)
        if (strcmp(out->colls[i].name, s) == 0) return &out->colls[i];
    sp__collective_row *v = sp__realloc(out->colls, sizeof *v * (out->ncolls + 1));
    if (!v) return NULL;
    out->colls = v;
    v[out->ncolls] = (sp__collective_row){.name = s};
    return &v[out->ncolls++];
}

static int by_wait_desc(const void *a, const void *b)
{
    const sp__straggler_row *x = a, *y = b;
    if (x->wait_ns != y->wait_ns) return x->wait_ns > y->wait_ns ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Matches each operation across the ranks (by process group and seq when
 * every rank's collectives carry them, else the k-th of every rank) and
 * charges each wait. */
static int match(rank_data *d, size_t n, sp__ranks *out)
{
    size_t fewest = SIZE_MAX, total = 0;
    int by_seq = n > 0;
    for (size_t i = 0; i < n; i++) {
        fewest = d[i].ncolls < fewest ? d[i].ncolls : fewest;
        total += d[i].ncolls;
        by_seq &= d[i].recorded;
    }
    if (by_seq)
        for (size_t i = 0; i < n; i++)
            qsort(d[i].colls, d[i].ncolls, sizeof *d[i].colls, coll_by_group_seq);
    size_t nops = n == 0 ? 0 : by_seq ? d[0].ncolls : fewest;
    double *dur = sp__alloc(sizeof *dur * (2 * n + 1)), *scratch = dur ? dur + n : NULL;
    const coll **op = sp__alloc(sizeof *op * (n + 1));
    if (!dur || !op) goto nomem;
    double threshold = SP__STRAGGLER_SHARE * out->median_step_ns;
    if (threshold < SP__STRAGGLER_MIN_NS) threshold = SP__STRAGGLER_MIN_NS;
    for (size_t k = 0; k < nops; k++) {
        int whole = 1;
        for (size_t i = 0; i < n && whole; i++) {
            op[i] = by_seq ? (i ? find_coll(&d[i], &d[0].colls[k]) : &d[0].colls[k]) : &d[i].colls[k];
            whole = op[i] != NULL;
        }
        if (!whole) continue;
        out->matched++;
        size_t who = 0;
        for (size_t i = 0; i < n; i++) {
            dur[i] = (double)(op[i]->end - op[i]->start);
            if (dur[i] < dur[who]) who = i;
            if (strcmp(sp__result_name(d[i].r, op[i]->name), sp__result_name(d[0].r, op[0]->name)) != 0)
                out->mismatched = 1;
        }
        size_t w = 0;
        for (size_t i = 0; i < n; i++)
            if (i != who) scratch[w++] = dur[i] - dur[who];
        double wait = median(scratch, w);
        memcpy(scratch, dur, sizeof *dur * n);
        sp__collective_row *c = collective_row(out, d[0].r, op[0]->name);
        if (!c) goto nomem;
        c->calls++;
        c->time_ns += median(scratch, n);
        c->wait_ns += wait;
        if (op[0]->bytes >= 0) {
            c->bytes += (double)op[0]->bytes;
            c->has_bytes = 1;
        }
        ptrdiff_t at = sp__steps_at(&d[who].s, op[who]->start);
        const sp__step *st = at >= 0 ? &d[who].s.v[at] : NULL;
        if (n < 2 || wait < threshold || !st) continue;
        double excess;
        int phase = behind_phase(d, n, who, st, scratch, &excess);
        sp__straggler_row *row = straggler_row(out, d[who].rank, phase);
        if (!row) goto nomem;
        row->count++;
        row->wait_ns += wait;
        row->behind_ns += excess;
        int seen = 0;
        for (size_t i = 0; i < row->nsteps && i < SP__STRAGGLER_STEPS; i++)
            seen |= row->steps[i] == st->number;
        if (!seen) {
            if (row->nsteps < SP__STRAGGLER_STEPS) row->steps[row->nsteps] = st->number;
            row->nsteps++;
        }
    }
    out->unmatched = total - out->matched * n;
    out->by_seq = by_seq;
    sp__free(dur);
    sp__free(op);
    if (out->nstrag) qsort(out->strag, out->nstrag, sizeof *out->strag, by_wait_desc);
    return 0;
nomem:
    sp__free(dur);
    sp__free(op);
    return -1;
}

static double median_step(const rank_data *d, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += d[i].s.n;
    double *v = sp__alloc(sizeof *v * (total ? total : 1));
    if (!v) return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d[i].s.n; j++)
            v[k++] = (double)(d[i].s.v[j].end_ns - d[i].s.v[j].start_ns);
    double m = median(v, k);
    sp__free(v);
    return m;
}

void sp__ranks_default_ids(const sp_result *const *results, size_t n, int64_t *ids)
{
    int distinct = 1;
    for (size_t i = 0; i < n; i++) {
        sp_dist_info info;
        sp_result_dist_info(results[i], &info);
        ids[i] = info.rank;
        for (size_t j = 0; j < i; j++)
            distinct &= ids[j] != ids[i];
    }
    if (!distinct)
        for (size_t i = 0; i < n; i++)
            ids[i] = (int64_t)i;
}

void sp__ranks_fini(sp__ranks *r)
{
    sp__free(r->rows);
    sp__free(r->colls);
    sp__free(r->strag);
    memset(r, 0, sizeof *r);
}

int sp__ranks_build(const sp_result *const *results, const int64_t *rank, size_t n, sp__ranks *out)
{
    memset(out, 0, sizeof *out);
    rank_data *d = sp__alloc(sizeof *d * (n ? n : 1));
    if (!d) return -1;
    memset(d, 0, sizeof *d * (n ? n : 1));
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        d[i].r = results[i];
        d[i].rank = rank[i];
        d[i].built = 1;
        rc = sp__model_build(&d[i].m, results[i]);
        if (rc == 0) {
            d[i].stepped = 1;
            rc = sp__steps_build(&d[i].m, &d[i].s);
        }
        if (rc == 0) rc = gather_colls(&d[i]);
    }
    if (rc == 0) qsort(d, n, sizeof *d, by_rank);
    if (rc == 0) {
        out->median_step_ns = median_step(d, n);
        out->rows = sp__alloc(sizeof *out->rows * (n ? n : 1));
        rc = out->rows ? 0 : -1;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = rank_figures(&d[i], &out->rows[i]);
        out->nrows++;
    }
    if (rc == 0) rc = match(d, n, out);
    for (size_t i = 0; i < n; i++) {
        if (d[i].stepped) sp__steps_fini(&d[i].s);
        if (d[i].built) sp__model_fini(&d[i].m);
        sp__free(d[i].colls);
    }
    sp__free(d);
    if (rc != 0) sp__ranks_fini(out);
    return rc;
}
