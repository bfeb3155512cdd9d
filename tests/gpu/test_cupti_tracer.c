/* test_cupti_tracer.c: the recorder's public face (gpu.h) on a machine
 * without a usable GPU: take, discard and release before any prepare are
 * harmless and give empty batches; prepare fails with one line that starts
 * "Profiling GPU is not supported in current context:" and says what to do, and says the same again later
 * without crashing. Built with or without CUPTI's headers (the absent
 * recorder answers the same way). On a host with a GPU, prepare may
 * succeed: the test then only checks that a take and a release work. */
#include "check.h"
#include "gpu.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_cupti_tracer_calls_before_prepare_are_harmless(void)
{
    sp__gpu_batch b;
    memset(&b, 0xab, sizeof b);
    CHECK_EQ(0, sp__gpu_take(&b));
    CHECK_EQ(0, b.count);
    CHECK(b.records == NULL);
    CHECK(b.devices == NULL);
    CHECK_EQ(0, b.device_count);
    sp__gpu_batch_free(&b);
    sp__gpu_batch_free(NULL);
    sp__gpu_discard();
    sp__gpu_release();
    sp__gpu_release();
    CHECK_EQ(0, sp__gpu_active());
}

/* One line: "Profiling GPU is not supported in current context: ...; recording the CPU only". */
static void check_reason(const char *why)
{
    CHECK(strncmp(why, SP__GPU_OFF, strlen(SP__GPU_OFF)) == 0);
    CHECK(strchr(why, '\n') == NULL);
    CHECK(strlen(why) > 40);
    CHECK(strstr(why, "recording the CPU only") != NULL);
}

static void test_cupti_tracer_prepare_without_gpu_says_why(void)
{
    char why[512] = "";
    int rc = sp__gpu_prepare(why, sizeof why);
    if (rc == 0) { /* a GPU host: recording works; take what is there */
        printf("note: prepare succeeded (a GPU is present)\n");
        CHECK(sp__gpu_active());
        sp__gpu_batch b;
        CHECK_EQ(0, sp__gpu_take(&b));
        CHECK(b.device_count > 0);
        sp__gpu_batch_free(&b);
        sp__gpu_release();
        CHECK_EQ(0, sp__gpu_active());
        return;
    }
    CHECK_EQ(-1, rc);
    printf("reason: %s\n", why);
    check_reason(why);
    CHECK_EQ(0, sp__gpu_active());
    /* The probe (for the warning at profiler creation) says the same. */
    char probed[512] = "";
    CHECK_EQ(-1, sp__gpu_probe(probed, sizeof probed));
    CHECK_STR_EQ(why, probed);
    /* Again: the same answer (remembered, or found again), no crash. */
    char again[512] = "";
    CHECK_EQ(-1, sp__gpu_prepare(again, sizeof again));
    CHECK_STR_EQ(why, again);
    /* A short buffer is cut, still terminated; none at all is accepted. */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    CHECK_EQ(-1, sp__gpu_prepare(tiny, sizeof tiny));
    CHECK_EQ(7, strlen(tiny));
    CHECK_EQ(-1, sp__gpu_prepare(NULL, 0));
}

static void test_cupti_tracer_calls_after_failed_prepare_are_harmless(void)
{
    char why[512];
    if (sp__gpu_prepare(why, sizeof why) == 0) {
        sp__gpu_release();
        return;
    }
    sp__gpu_discard();
    sp__gpu_batch b;
    CHECK_EQ(0, sp__gpu_take(&b));
    CHECK_EQ(0, b.count);
    CHECK_EQ(0, b.cupti_dropped + b.discarded_records + b.zero_timestamp);
    sp__gpu_batch_free(&b);
    sp__gpu_release();
    CHECK_EQ(0, sp__gpu_active());
}

/* A child forked after the recorder was used keeps away from it: prepare
 * and probe refuse with the fork line (in a build with CUPTI), and take,
 * discard and release do nothing. The child leaves through _exit. */
static void test_cupti_tracer_forked_child_keeps_away(void)
{
    char why[512];
    if (sp__gpu_probe(why, sizeof why) == 0) return; /* a GPU host: the parent keeps it */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(280);
        char line[512] = "";
        int ok = sp__gpu_prepare(line, sizeof line) == -1 && strncmp(line, SP__GPU_OFF, strlen(SP__GPU_OFF)) == 0;
#ifdef SP_HAVE_CUPTI
        ok = ok && strstr(line, "forked") != NULL && sp__gpu_probe(NULL, 0) == -1;
#endif
        sp__gpu_batch b;
        ok = ok && sp__gpu_take(&b) == 0 && b.count == 0 && b.device_count == 0;
        sp__gpu_discard();
        sp__gpu_release();
        ok = ok && !sp__gpu_active();
        if (!ok) fprintf(stderr, "child: %s\n", line);
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    RUN_TEST(test_cupti_tracer_calls_before_prepare_are_harmless);
    RUN_TEST(test_cupti_tracer_prepare_without_gpu_says_why);
    RUN_TEST(test_cupti_tracer_calls_after_failed_prepare_are_harmless);
    RUN_TEST(test_cupti_tracer_forked_child_keeps_away);
    return TEST_SUMMARY();
}
