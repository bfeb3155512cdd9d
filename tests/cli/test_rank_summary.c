/* test_rank_summary.c: `stepprof summary` of one file per rank prints the
 * cross-rank summary (semantics.md §6.10) of the synthetic job of
 * synth_ranks.h, saved as JSON and .pb, with rank 2 named as the straggler;
 * the time unit is honoured wherever it is given; --torch refuses several
 * files; a bad file among them exits 1. */
#include "analyze/synth_ranks.h"
#include "cli/cli_harness.h"

static void make_files(void)
{
    for (int i = 0; i < RANKS; i++) {
        char name[32];
        snprintf(name, sizeof name, i % 2 ? "rank%d.pb" : "rank%d.json", i);
        save(rank_result(i, 2, 30, 0), name, i % 2 ? SP_FORMAT_AUTO : SP_FORMAT_JSON);
    }
}

static void test_rank_summary_cli(void)
{
    CHECK_EQ(0, cli("summary rank0.json rank1.pb rank2.json rank3.pb"));
    CHECK(strstr(out_text, "-Cross-rank Summary-") != NULL);
    CHECK(strstr(out_text, "Time unit: ms (means per step)") != NULL);
    CHECK(strstr(out_text, "9 operations matched on every rank (by their order), 0 collectives left unmatched") != NULL);
    const char *strag = strstr(out_text, "-Straggler Summary-");
    CHECK(strag != NULL);
    if (strag) {
        CHECK(strstr(strag, "\n2 ") != NULL);
        CHECK(strstr(strag, "Dataloader") != NULL);
        CHECK(strstr(strag, "#0, #3, #6") != NULL);
    }
    CHECK_EQ(0, cli("summary rank0.json rank1.pb --time-unit us rank2.json rank3.pb"));
    CHECK(strstr(out_text, "Time unit: us (means per step)") != NULL);
    CHECK_EQ(2, cli("summary --torch=count rank0.json rank1.pb"));
    CHECK(strstr(err_text, "--torch takes one FILE") != NULL);
    CHECK_EQ(2, cli("summary rank0.json rank1.pb --bogus"));
    CHECK_EQ(1, cli("summary rank0.json missing.json"));
    CHECK(strstr(err_text, "missing.json") != NULL);
}

int main(void)
{
    cli_harness_start();
    make_files();
    RUN_TEST(test_rank_summary_cli);
    cli_harness_end();
    return TEST_SUMMARY();
}
