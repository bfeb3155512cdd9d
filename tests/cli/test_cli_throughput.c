/* test_cli_throughput.c: `stepprof summary` prints the Throughput Summary
 * after the tables (tools/stepprof/commands.c, src/analyze/throughput*.c):
 * its exact text for a trace whose figures are known, its absence when no
 * step has num_samples and no option asks for it, "unknown" with a reason
 * when asked anyway, and a clear usage error for absurd option values.
 * The input is a small Chrome-trace JSON written here: steps #0 (100 ms, 32
 * samples), #1 (200 ms, 32 samples) and #2 (100 ms, no num_samples). */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/sp_cli_tput_XXXXXX";
static char text[1 << 16];

static const char *path_of(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* Writes a trace of three steps; samples0 and samples1 are the args of
 * the first two ("" for none, else `,"num_samples":N`). */
static void write_trace(const char *name, const char *samples0, const char *samples1)
{
    FILE *f = fopen(path_of(name), "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f,
            "{\"traceEvents\":[\n"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":1,\"tid\":1,"
            "\"ts\":1000.000,\"dur\":100000.000,\"args\":{\"External id\":1%s,\"Event Type\":\"ProfileStep\"}},\n"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"matmul\",\"pid\":1,\"tid\":1,"
            "\"ts\":2000.000,\"dur\":50000.000,\"args\":{\"External id\":2,\"Event Type\":\"Operator\"}},\n"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
            "\"ts\":101000.000,\"dur\":200000.000,\"args\":{\"External id\":3%s,\"Event Type\":\"ProfileStep\"}},\n"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,"
            "\"ts\":301000.000,\"dur\":100000.000,\"args\":{\"External id\":4,\"Event Type\":\"ProfileStep\"}}\n"
            "]}\n",
            samples0, samples1);
    fclose(f);
}

/* Runs `stepprof summary --views Overview ARGS` (stderr too) into text;
 * returns the exit code. */
static int summary(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s summary --views Overview %s 2>&1", SP_CLI, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The Throughput Summary in text, from its title line on; "" if none. */
static const char *block(void)
{
    const char *at = strstr(text, "Throughput Summary");
    if (!at) return "";
    while (at > text && at[-1] != '\n') at--;
    return at;
}

static void test_cli_throughput_exact_text(void)
{
    write_trace("t.json", ",\"num_samples\":32", ",\"num_samples\":32");
    char args[512];
    snprintf(args, sizeof args, "--tokens-per-sample 512 --flops-per-step 1e12 --peak-tflops=100 %s",
             path_of("t.json"));
    CHECK_EQ(0, summary(args));
    CHECK_STR_EQ("--------------------Throughput Summary--------------------\n"
                 "Steps: 3 recorded, 2 with num_samples\n"
                 "Time unit: ms\n"
                 "------------------------  ---------------  ---------------  \n"
                 "Figure                    Median           Mean             \n"
                 "------------------------  ---------------  ---------------  \n"
                 "Step time                 100.00           133.33           \n"
                 "Samples/s                 240.00           213.33           \n"
                 "Tokens/s                  122880.00        109226.67        \n"
                 "FLOPs per step            1.000e+12        1.000e+12        \n"
                 "Achieved TFLOP/s          10.00            7.50             \n"
                 "MFU (%)                   10.00            7.50             \n"
                 "------------------------  ---------------  ---------------  \n"
                 "Note:\n"
                 "FLOPs per step: given.\n"
                 "Peak: 100.00 TFLOP/s, given.\n"
                 "Median: over the steps that have the figure. Mean: for a rate, its total over those "
                 "steps' total time; otherwise the plain mean.\n"
                 "----------------------------------------------------------\n"
                 "\n"
                 "\n",
                 block());
}

static void test_cli_throughput_only_when_known_or_asked(void)
{
    /* num_samples on one step only: printed, counting that step. */
    write_trace("one.json", ",\"num_samples\":8", "");
    char args[512];
    snprintf(args, sizeof args, "%s", path_of("one.json"));
    CHECK_EQ(0, summary(args));
    CHECK(strstr(block(), "Steps: 3 recorded, 1 with num_samples\n") != NULL);
    CHECK(strstr(block(), "Samples/s                 80.00            80.00") != NULL);
    CHECK(strstr(block(), "Tokens/s: unknown: the tokens per sample were not given.\n") != NULL);
    CHECK(strstr(block(), "Peak: unknown: the result has no GPU device properties") != NULL);
    /* None, and a negative or huge count (left out when loaded): not printed. */
    write_trace("none.json", ",\"num_samples\":-5", ",\"num_samples\":1e20");
    snprintf(args, sizeof args, "%s", path_of("none.json"));
    CHECK_EQ(0, summary(args));
    CHECK(strstr(text, "Overview Summary") != NULL);
    CHECK_STR_EQ("", block());
    /* Asked for: printed, every unknown saying why, no nan or inf. */
    snprintf(args, sizeof args, "--throughput %s", path_of("none.json"));
    CHECK_EQ(0, summary(args));
    CHECK(strstr(block(), "Samples/s                 unknown          unknown") != NULL);
    CHECK(strstr(block(), "Samples/s: unknown: no step has num_samples (pass the batch size to step()).\n") != NULL);
    CHECK(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL);
}

static void test_cli_throughput_absurd_options(void)
{
    static const char *const bad[] = {"--tokens-per-sample -1", "--tokens-per-sample nan",
                                      "--flops-per-step 1e31", "--flops-per-step 12abc",
                                      "--peak-tflops inf", "--peak-tflops 0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[512];
        snprintf(args, sizeof args, "%s %s", bad[i], path_of("t.json"));
        CHECK_EQ(2, summary(args));
        CHECK(strstr(text, "is not a number above 0 and at most") != NULL);
    }
    CHECK_EQ(2, summary("--peak-tflops"));
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN_TEST(test_cli_throughput_exact_text);
    RUN_TEST(test_cli_throughput_only_when_known_or_asked);
    RUN_TEST(test_cli_throughput_absurd_options);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return TEST_SUMMARY();
}
