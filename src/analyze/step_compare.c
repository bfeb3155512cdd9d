/* step_compare.c: sp_result_compare_steps, the regression gate's judgement
 * (diagnose.md §4). A change counts as a regression only when NEW's
 * median step value is above BASE's by more than the threshold AND NEW's
 * steps are slower as a distribution: a one-sided Mann-Whitney U test
 * (ranks with ties averaged, normal approximation with tie and continuity
 * corrections) gives p < SP__GATE_ALPHA. The test has no random part, so the
 * same two results always give the same answer; ranks make it insensitive
 * to a few outlier steps in either run. */
#include "steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SP__GATE_ALPHA 0.01  /* one-sided significance level */
#define SP__GATE_MIN_STEPS 3 /* per side, for the spread test */

typedef struct ranked {
    double v;
    int side;
} ranked;

static int by_value(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    return a->v < b->v ? -1 : a->v > b->v;
}

static int by_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One-sided p-value that side 1 is stochastically larger than side 0. */
static int mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *p)
{
    size_t n = na + nb;
    ranked *r = sp__alloc(sizeof *r * n);
    if (!r) return -1;
    for (size_t i = 0; i < na; i++)
        r[i] = (ranked){a[i], 0};
    for (size_t i = 0; i < nb; i++)
        r[na + i] = (ranked){b[i], 1};
    qsort(r, n, sizeof *r, by_value);
    double rank_b = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && r[j].v == r[i].v)
            j++;
        double t = (double)(j - i), avg = ((double)i + (double)j + 1) / 2; /* ranks from 1 */
        for (size_t k = i; k < j; k++)
            if (r[k].side) rank_b += avg;
        ties += t * t * t - t;
        i = j;
    }
    sp__free(r);
    double n1 = (double)na, n2 = (double)nb, N = (double)n;
    double u = rank_b - n2 * (n2 + 1) / 2; /* pairs where NEW's value is larger */
    double mean = n1 * n2 / 2;
    double var = n1 * n2 / 12 * ((N + 1) - ties / (N * (N - 1)));
    if (var <= 0) {
        *p = 1;
        return 0;
    }
    double z = (u - mean - 0.5) / sqrt(var);
    *p = 0.5 * erfc(z / sqrt(2.0));
    return 0;
}

/* The metric's per-step values of r, allocated in *values. */
static sp_status values_of(const sp_result *r, const char *metric, double **values, size_t *n,
                           int *found)
{
    sp__model m;
    sp__steps s;
    *values = NULL;
    *n = 0;
    if (sp__model_build(&m, r) != 0 || sp__steps_build(&m, &s) != 0) {
        sp__model_fini(&m);
        return sp__fail(SP_ENOMEM, "out of memory reading the steps");
    }
    sp_status st = SP_OK;
    if (s.n == 0) {
        st = sp__fail(SP_ENODATA, "no steps recorded (no ProfileStep ranges)");
    } else if (!(*values = sp__alloc(sizeof **values * s.n))) {
        st = sp__fail(SP_ENOMEM, "out of memory reading the steps");
    } else {
        int rc = sp__steps_metric(&m, &s, metric, *values, found);
        if (rc == 1)
            st = sp__fail(SP_EINVAL,
                          "unknown metric '%s': step, op:NAME, kernel:NAME or "
                          "phase:NAME",
                          metric);
        else if (rc != 0)
            st = sp__fail(SP_ENOMEM, "out of memory reading the steps");
        *n = s.n;
    }
    if (st != SP_OK) {
        sp__free(*values);
        *values = NULL;
    }
    sp__steps_fini(&s);
    sp__model_fini(&m);
    return st;
}

sp_status sp_result_compare_steps(const sp_result *base, const sp_result *changed,
                                  const char *metric, double threshold, sp_step_comparison *out)
{
    if (!base || !changed || !out || !(threshold >= 0))
        return sp__fail(SP_EINVAL, "sp_result_compare_steps: two results, an output and a "
                                   "threshold >= 0 are required");
    memset(out, 0, sizeof *out);
    if (!metric) metric = "step";
    double *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int found_a = 0, found_b = 0;
    sp_status st = values_of(base, metric, &a, &na, &found_a);
    if (st == SP_OK) st = values_of(changed, metric, &b, &nb, &found_b);
    if (st == SP_OK && !found_a && !found_b)
        st = sp__fail(SP_ENODATA, "metric '%s': no such ranges in either result", metric);
    if (st == SP_OK) {
        out->base_steps = na;
        out->new_steps = nb;
        out->tested = na >= SP__GATE_MIN_STEPS && nb >= SP__GATE_MIN_STEPS;
        out->p_value = 1;
        if (out->tested && mann_whitney(a, na, b, nb, &out->p_value) != 0)
            st = sp__fail(SP_ENOMEM, "out of memory comparing the steps");
        out->base_median_ns = median(a, na);
        out->new_median_ns = median(b, nb);
        double ma = out->base_median_ns, mb = out->new_median_ns;
        out->change = ma > 0 ? mb / ma - 1 : mb > 0 ? HUGE_VAL : 0;
        out->regression =
            out->change > threshold && (!out->tested || out->p_value < SP__GATE_ALPHA);
    }
    sp__free(a);
    sp__free(b);
    return st;
}
