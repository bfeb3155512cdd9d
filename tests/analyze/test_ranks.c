/* test_ranks.c: the cross-rank view (ranks.h, table_ranks.c) on the
 * synthetic data-parallel jobs of synth_ranks.h, where rank 2 loads 30 ms
 * longer on every third step, so the others wait for it. Times are exact,
 * so every figure is known in advance. */
#include "ranks.h"
#include "synth_ranks.h"

static void build(sp_result **r, int slow, int64_t extra_ms, sp__ranks *x)
{
    int64_t ranks[RANKS];
    for (int i = 0; i < RANKS; i++) {
        r[i] = rank_result(i, slow, extra_ms, 0);
        ranks[i] = i;
    }
    CHECK_EQ(0, sp__ranks_build((const sp_result *const *)r, ranks, RANKS, x));
}

static void release(sp_result **r)
{
    for (int i = 0; i < RANKS; i++)
        sp_result_release(r[i]);
}

static void test_ranks_straggler_named(void)
{
    sp_result *r[RANKS];
    sp__ranks x;
    build(r, 2, 30, &x);
    CHECK_EQ(RANKS, x.nrows);
    CHECK_EQ(STEPS, x.matched);
    CHECK_EQ(0, x.unmatched);
    CHECK_EQ(0, x.mismatched);
    CHECK_EQ(1, x.nstrag);
    if (x.nstrag == 1) {
        const sp__straggler_row *s = &x.strag[0];
        CHECK_EQ(2, s->rank);
        CHECK_EQ(SP__PHASE_DATALOADER, s->phase);
        CHECK_EQ(3, s->count);
        CHECK_EQ(3, s->nsteps);
        CHECK_EQ(0, s->steps[0]);
        CHECK_EQ(3, s->steps[1]);
        CHECK_EQ(6, s->steps[2]);
        CHECK_EQ(90 * MS, (int64_t)s->wait_ns);   /* 30 ms in each of 3 steps */
        CHECK_EQ(90 * MS, (int64_t)s->behind_ns); /* its Dataloader, 30 ms over the others' */
    }
    /* Rank 0 waits 30 ms in 3 of 9 steps: exposed communication is its
     * all-reduce, 1 ms a step plus those waits; no op runs meanwhile. */
    CHECK_EQ(0, x.rows[0].rank);
    CHECK_EQ((9 * MS + 90 * MS) / STEPS, (int64_t)x.rows[0].exposed_ns);
    CHECK_EQ((int64_t)x.rows[0].comm_ns, (int64_t)x.rows[0].exposed_ns);
    CHECK_EQ(0, (int64_t)x.rows[0].overlap_ns);
    CHECK_EQ(1 * MS, (int64_t)x.rows[2].comm_ns); /* the straggler never waits */
    CHECK_EQ(8 * MS, (int64_t)x.rows[2].compute_ns); /* the op, outside communication */
    CHECK_EQ(1, x.ncolls);
    if (x.ncolls == 1) {
        CHECK_STR_EQ("allreduce", x.colls[0].name);
        CHECK_EQ(STEPS, x.colls[0].calls);
        CHECK_EQ(90 * MS, (int64_t)x.colls[0].wait_ns);
    }
    sp__buf b;
    sp__buf_init(&b);
    sp__ranks_render(&x, "ms", &b);
    CHECK(strstr(sp__buf_cstr(&b), "Straggler Summary") != NULL);
    CHECK(strstr(sp__buf_cstr(&b), "#0, #3, #6") != NULL);
    sp__buf_fini(&b);
    sp__ranks_fini(&x);
    release(r);
}

static void test_ranks_balanced_has_no_straggler(void)
{
    sp_result *r[RANKS];
    sp__ranks x;
    build(r, -1, 0, &x);
    CHECK_EQ(0, x.nstrag);
    CHECK_EQ(STEPS, x.matched);
    /* Every rank: a 28 ms step of which 1 ms is exposed communication. */
    for (size_t i = 0; i < x.nrows; i++) {
        CHECK_EQ(28 * MS, (int64_t)x.rows[i].step_ns);
        CHECK_EQ(1 * MS, (int64_t)x.rows[i].exposed_ns);
    }
    sp__ranks_fini(&x);
    release(r);
}

/* A small lag (under 5% of the step) is noise, not a straggler. */
static void test_ranks_small_lag_is_not_a_straggler(void)
{
    sp_result *r[RANKS];
    sp__ranks x;
    build(r, 1, 1, &x);
    CHECK_EQ(0, x.nstrag);
    sp__ranks_fini(&x);
    release(r);
}

static void test_ranks_public_api(void)
{
    sp_result *r[RANKS];
    int64_t ranks[RANKS] = {3, 2, 1, 0}; /* given in any order */
    for (int i = 0; i < RANKS; i++)
        r[i] = rank_result(RANKS - 1 - i, 2, 30, i == 0);
    FILE *f = tmpfile();
    CHECK_OK(sp_results_rank_summary((const sp_result *const *)r, ranks, RANKS, "ms", f));
    char text[8192] = "";
    rewind(f);
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    CHECK(strstr(text, "-Cross-rank Summary-") != NULL);
    /* Rank 3 lacks its last all-reduce: 8 matched, 3 left over. */
    CHECK(strstr(text, "8 operations matched on every rank (by their order), 3 collectives left unmatched") != NULL);
    const char *row = strstr(text, "\n2 ");
    CHECK(row != NULL);
    CHECK(strstr(text, "Dataloader") != NULL);
    int64_t dup[RANKS] = {0, 1, 1, 2};
    f = tmpfile();
    CHECK_EQ(SP_EINVAL, sp_results_rank_summary((const sp_result *const *)r, dup, RANKS, NULL, f));
    CHECK(strstr(sp_last_error(), "rank 1 is given twice") != NULL);
    CHECK_EQ(SP_EINVAL, sp_results_rank_summary((const sp_result *const *)r, NULL, RANKS, "weeks", f));
    CHECK_EQ(SP_EINVAL, sp_results_rank_summary(NULL, NULL, 0, NULL, f));
    /* One rank: no straggler to name, said so. */
    rewind(f);
    CHECK_OK(sp_results_rank_summary((const sp_result *const *)r, NULL, 1, "us", f));
    rewind(f);
    len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    CHECK(strstr(text, "One rank only") != NULL);
    fclose(f);
    release(r);
}

/* Gives every Communication range of r a collective record (group "0",
 * seq from first_seq on, 4096 bytes), as sp_profiler_add_comm_info would. */
static void add_records(sp_result *r, int64_t first_seq)
{
    sp__thread *t = &r->threads[0];
    size_t n = 0;
    for (size_t k = 0; k < t->count; k++)
        n += t->events[k].type == SP_EVENT_COMMUNICATION;
    t->comms = sp__alloc(sizeof *t->comms * (n + 1));
    CHECK(t->comms != NULL);
    if (!t->comms) return;
    int64_t seq = first_seq;
    for (size_t k = 0; k < t->count; k++) {
        if (t->events[k].type != SP_EVENT_COMMUNICATION) continue;
        t->comms[t->comm_count++] = (sp__comm){t->events[k].start_ns, sp__names_from_ptr(&r->names, "allreduce"),
                                               sp__names_from_ptr(&r->names, "0"), RANKS, 4096, seq++,
                                               (int32_t)k};
    }
}

/* With records, operations are matched by group and seq: rank 3 lacks the
 * job's first all-reduce (seq 0), so matching by order would pair every
 * operation wrongly; by seq, rank 2 is still the straggler of steps 3 and
 * 6 (the missing one was step 0's), and the bytes give a bandwidth. */
static void test_ranks_matched_by_seq(void)
{
    sp_result *r[RANKS];
    int64_t ids[RANKS] = {0, 1, 2, 3};
    for (int i = 0; i < RANKS; i++) {
        r[i] = rank_result(i, 2, 30, 0);
        add_records(r[i], 0);
    }
    sp__thread *t3 = &r[3]->threads[0];
    memmove(t3->comms, t3->comms + 1, sizeof *t3->comms * (t3->comm_count - 1));
    t3->comm_count--;
    sp__ranks x;
    CHECK_EQ(0, sp__ranks_build((const sp_result *const *)r, ids, RANKS, &x));
    CHECK_EQ(1, x.by_seq);
    CHECK_EQ(STEPS - 1, x.matched);
    CHECK_EQ(3, x.unmatched); /* seq 0 on ranks 0, 1 and 2 */
    CHECK_EQ(1, x.nstrag);
    if (x.nstrag == 1) {
        CHECK_EQ(2, x.strag[0].rank);
        CHECK_EQ(SP__PHASE_DATALOADER, x.strag[0].phase);
        CHECK_EQ(2, x.strag[0].nsteps);
        CHECK_EQ(3, x.strag[0].steps[0]);
        CHECK_EQ(6, x.strag[0].steps[1]);
    }
    CHECK_EQ(1, x.ncolls);
    if (x.ncolls == 1) {
        CHECK_EQ(1, x.colls[0].has_bytes);
        CHECK_EQ(4096.0 * (STEPS - 1), x.colls[0].bytes);
    }
    sp__buf b;
    sp__buf_init(&b);
    sp__ranks_render(&x, "ms", &b);
    CHECK(strstr(sp__buf_cstr(&b), "(by process group and seq)") != NULL);
    CHECK(strstr(sp__buf_cstr(&b), "32768") != NULL); /* 8 x 4096 bytes */
    sp__buf_fini(&b);
    sp__ranks_fini(&x);
    release(r);
}

static void test_ranks_out_of_memory(void)
{
    sp_result *r[RANKS];
    int64_t ranks[RANKS] = {0, 1, 2, 3};
    for (int i = 0; i < RANKS; i++)
        r[i] = rank_result(i, 2, 30, 0);
    int failed = 0;
    for (uint64_t nth = 1; nth < 500; nth++) {
        sp__ranks x;
        sp__alloc_fail_at(nth);
        int rc = sp__ranks_build((const sp_result *const *)r, ranks, RANKS, &x);
        sp__alloc_fail_at(0);
        if (rc == 0) {
            CHECK_EQ(1, x.nstrag);
            sp__ranks_fini(&x);
            break;
        }
        CHECK_EQ(0, x.nrows);
        failed++;
    }
    printf("ranks: %d allocations failed in turn\n", failed);
    CHECK(failed > 10);
    release(r);
}

int main(void)
{
    RUN_TEST(test_ranks_straggler_named);
    RUN_TEST(test_ranks_balanced_has_no_straggler);
    RUN_TEST(test_ranks_small_lag_is_not_a_straggler);
    RUN_TEST(test_ranks_public_api);
    RUN_TEST(test_ranks_matched_by_seq);
    RUN_TEST(test_ranks_out_of_memory);
    return TEST_SUMMARY();
}
