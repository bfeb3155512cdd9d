/* test_merge_align.c: the clock solve of the merge (merge_align.c). Missing
 * seqs are numbered per group in start order; pairs match by (group, seq);
 * the median offset shrugs off one late rank; a mismatched collective name
 * is counted and left out; the drift fit recovers a known slope; residuals
 * are exact at absolute times near 2^61 ns, where a double alone has a
 * 256 ns step. */
#include "check.h"
#include "merge.h"

#include <math.h>
#include <string.h>

#define T0 ((int64_t)1790857026000000000)

static void push(mg_colls *c, uint64_t group, int64_t seq, int64_t end_ns, uint64_t name)
{
    mg_coll x = {group, name, seq, end_ns - 100000, end_ns};
    CHECK_EQ(0, sp__merge_colls_push(c, &x));
}

static void test_merge_align_seq_by_start(void)
{
    mg_colls c = {0};
    push(&c, 7, -1, T0 + 3000, 0);
    push(&c, 9, -1, T0 + 1000, 0);
    push(&c, 7, -1, T0 + 1000, 0);
    push(&c, 7, -1, T0 + 2000, 0);
    sp__merge_colls_key(&c);
    /* group 7 first (the smaller hash), then seqs 0, 1, 2 by start */
    CHECK_EQ(7, (int)c.v[0].group);
    CHECK_EQ(0, (int)c.v[0].seq);
    CHECK(c.v[0].end_ns == T0 + 1000);
    CHECK_EQ(2, (int)c.v[2].seq);
    CHECK(c.v[2].end_ns == T0 + 3000);
    CHECK_EQ(0, (int)c.v[3].seq); /* group 9 counts from 0 */
    sp__merge_colls_free(&c);
}

static void test_merge_align_median_offset(void)
{
    mg_colls ref = {0}, c = {0};
    for (int s = 0; s < 21; s++) {
        push(&ref, 1, s, T0 + s * 1000000, 5);
        /* 500 us behind, and one collective where this rank was 3 ms late */
        push(&c, 1, s, T0 + s * 1000000 - 500000 + (s == 10 ? 3000000 : 0), 5);
    }
    push(&c, 1, 99, T0, 5); /* unmatched */
    sp__merge_colls_key(&ref);
    sp__merge_colls_key(&c);
    mg_fit f;
    CHECK_EQ(0, sp__merge_fit(&ref, &c, T0, &f));
    CHECK_U64_EQ(21, f.matched);
    CHECK(f.median_ns == 500000.0);
    uint64_t n;
    double med, max;
    CHECK_EQ(0, sp__merge_residual(&ref, &c, f.median_ns, 0, T0, &n, &med, &max));
    CHECK_U64_EQ(21, n);
    CHECK(med == 0.0);
    CHECK(max == 3000000.0); /* the late one, exact to the ns */
    CHECK_EQ(0, sp__merge_residual(&ref, &c, f.median_ns + 7, 0, T0, &n, &med, &max));
    CHECK(med == 7.0);
    sp__merge_colls_free(&ref);
    sp__merge_colls_free(&c);
}

static void test_merge_align_name_mismatch(void)
{
    mg_colls ref = {0}, c = {0};
    push(&ref, 1, 0, T0, 5);
    push(&ref, 1, 1, T0 + 1000, 5);
    push(&c, 1, 0, T0 - 10, 5);
    push(&c, 1, 1, T0 + 1000 - 4000, 6); /* another collective at that seq */
    mg_fit f;
    CHECK_EQ(0, sp__merge_fit(&ref, &c, T0, &f));
    CHECK_U64_EQ(1, f.matched);
    CHECK_U64_EQ(1, f.mismatched);
    CHECK(f.median_ns == 10.0);
    sp__merge_colls_free(&ref);
    sp__merge_colls_free(&c);
}

static void test_merge_align_drift(void)
{
    /* d = 200 us + 50 ppm of the time since T0, over 10 s */
    mg_colls ref = {0}, c = {0};
    for (int s = 0; s <= 10; s++) {
        int64_t t = T0 + (int64_t)s * 1000000000;
        push(&ref, 1, s, t, 0);
        push(&c, 1, s, t - 200000 - (int64_t)s * 50000, 0);
    }
    mg_fit f;
    CHECK_EQ(0, sp__merge_fit(&ref, &c, T0, &f));
    double den = f.n * f.stt - f.st * f.st;
    double b = (f.n * f.std - f.st * f.sd) / den, a = (f.sd - b * f.st) / f.n;
    CHECK(fabs(b / 1e3 - 50.0) < 0.01); /* ppm */
    CHECK(fabs(a - 200000.0) < 20.0);   /* t is on this rank's clock: 200 us early */
    CHECK(fabs(sp__merge_shift(a, b / 1e3, T0, T0 + 5000000000) - 450000.0) < 50.0);
    sp__merge_colls_free(&ref);
    sp__merge_colls_free(&c);
}

static void test_merge_align_median(void)
{
    double v[] = {5, 1, 3, 2};
    CHECK(sp__merge_median(v, 4) == 2.5);
    CHECK(sp__merge_median(v, 3) == 2.0); /* v is sorted now: 1 2 3 */
    CHECK(sp__merge_median(v, 0) == 0.0);
}

int main(void)
{
    RUN_TEST(test_merge_align_seq_by_start);
    RUN_TEST(test_merge_align_median_offset);
    RUN_TEST(test_merge_align_name_mismatch);
    RUN_TEST(test_merge_align_drift);
    RUN_TEST(test_merge_align_median);
    return TEST_SUMMARY();
}
