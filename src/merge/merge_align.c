/* merge_align.c: the clock solve of the merge. All ranks leave a collective
 * at nearly the same instant, so the end of one collective on two ranks is
 * a sync point: d = (reference rank's end) - (this rank's end) is how far
 * this rank's clock runs behind. Collectives match across ranks by process
 * group and seq (docs/trace-format.md §13). A rank's offset is the median
 * of its d (robust to a late rank in one collective); the least-squares
 * sums give a drift term where it is asked for. Only two ranks' collectives
 * are in memory at a time. */
#include "merge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sp__merge_colls_push(mg_colls *c, const mg_coll *x)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        mg_coll *v = sp__realloc(c->v, cap * sizeof *v);
        if (!v) return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = *x;
    return 0;
}

void sp__merge_colls_free(mg_colls *c)
{
    sp__free(c->v);
    memset(c, 0, sizeof *c);
}

static int by_group_start(const void *a, const void *b)
{
    const mg_coll *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    return x->end_ns < y->end_ns ? -1 : x->end_ns > y->end_ns;
}

static int by_key(const void *a, const void *b)
{
    const mg_coll *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return x->end_ns < y->end_ns ? -1 : x->end_ns > y->end_ns;
}

void sp__merge_colls_key(mg_colls *c)
{
    if (c->n == 0) return;
    qsort(c->v, c->n, sizeof *c->v, by_group_start);
    int64_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (i > 0 && c->v[i].group != c->v[i - 1].group) k = 0;
        if (c->v[i].seq < 0) c->v[i].seq = k;
        k++;
    }
    qsort(c->v, c->n, sizeof *c->v, by_key);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double sp__merge_median(double *v, size_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Calls fn for each pair with one key in both (the first of a key repeated
 * within one rank). */
typedef void (*pair_fn)(void *ctx, const mg_coll *ref, const mg_coll *c);

static void join(const mg_colls *ref, const mg_colls *c, pair_fn fn, void *ctx)
{
    size_t i = 0, j = 0;
    while (i < ref->n && j < c->n) {
        const mg_coll *a = &ref->v[i], *b = &c->v[j];
        int o = a->group != b->group ? (a->group < b->group ? -1 : 1)
                : a->seq != b->seq   ? (a->seq < b->seq ? -1 : 1)
                                     : 0;
        if (o < 0) {
            i++;
        } else if (o > 0) {
            j++;
        } else {
            fn(ctx, a, b);
            while (++i < ref->n && ref->v[i].group == a->group && ref->v[i].seq == a->seq) {
            }
            while (++j < c->n && c->v[j].group == b->group && c->v[j].seq == b->seq) {
            }
        }
    }
}

typedef struct fit_ctx {
    mg_fit *fit;
    double *d;
    int64_t t0_ns;
} fit_ctx;

static void fit_pair(void *ctx, const mg_coll *a, const mg_coll *b)
{
    fit_ctx *f = ctx;
    if (a->coll && b->coll && a->coll != b->coll) {
        f->fit->mismatched++;
        return;
    }
    double d = (double)(a->end_ns - b->end_ns);
    double t = (double)(b->end_ns - f->t0_ns) / 1e9;
    f->d[f->fit->matched++] = d;
    f->fit->n += 1;
    f->fit->st += t;
    f->fit->sd += d;
    f->fit->stt += t * t;
    f->fit->std += t * d;
}

int sp__merge_fit(const mg_colls *ref, const mg_colls *c, int64_t t0_ns, mg_fit *fit)
{
    memset(fit, 0, sizeof *fit);
    size_t most = c->n < ref->n ? c->n : ref->n;
    fit_ctx f = {fit, sp__alloc((most ? most : 1) * sizeof(double)), t0_ns};
    if (!f.d) return -1;
    join(ref, c, fit_pair, &f);
    fit->median_ns = sp__merge_median(f.d, fit->matched);
    sp__free(f.d);
    return 0;
}

double sp__merge_shift(double offset_ns, double drift_ppm, int64_t t0_ns, int64_t t_ns)
{
    /* drift_ppm is ns per ms: ppm of the elapsed time */
    return offset_ns + drift_ppm * 1e-6 * (double)(t_ns - t0_ns);
}

typedef struct res_ctx {
    double *r;
    uint64_t n;
    double offset_ns, drift_ppm;
    int64_t t0_ns;
} res_ctx;

static void res_pair(void *ctx, const mg_coll *a, const mg_coll *b)
{
    res_ctx *x = ctx;
    if (a->coll && b->coll && a->coll != b->coll) return;
    /* the difference first: a double holds an absolute time only to 256 ns */
    double shift = sp__merge_shift(x->offset_ns, x->drift_ppm, x->t0_ns, b->end_ns);
    x->r[x->n++] = fabs((double)(a->end_ns - b->end_ns) - shift);
}

int sp__merge_residual(const mg_colls *ref, const mg_colls *c, double offset_ns, double drift_ppm,
                       int64_t t0_ns, uint64_t *n, double *median_ns, double *max_ns)
{
    size_t most = c->n < ref->n ? c->n : ref->n;
    res_ctx x = {sp__alloc((most ? most : 1) * sizeof(double)), 0, offset_ns, drift_ppm, t0_ns};
    if (!x.r) return -1;
    join(ref, c, res_pair, &x);
    *n = x.n;
    *median_ns = sp__merge_median(x.r, x.n);
    *max_ns = x.n ? x.r[x.n - 1] : 0; /* sorted by the median */
    sp__free(x.r);
    return 0;
}
