/* test_merge.c: the public entry of the merge (sp_trace_merge, merge.c):
 * bad arguments are refused with the right status before anything is
 * written; the log callback gets what was done and, flagged as warnings,
 * what was found; the merged file loads back with sp_result_load, one
 * process per rank. (tests/merge/test_merge.py runs the CLI end to end.) */
#include "check.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/sp_merge_XXXXXX";

static void write_rank(const char *path, int rank, const char *host)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f,
            "{\"schemaVersion\":1,\"distributedInfo\":{\"rank\": %d, \"world_size\": 3, "
            "\"hostname\": \"%s\"},"
            "\"baseTimeNanoseconds\":1000000000,\"traceEvents\":[\n",
            rank, host);
    for (int s = 0; s < 5; s++)
        fprintf(f,
                "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ar\",\"pid\":%d,\"tid\":1,\"ts\":%d."
                "%03d,"
                "\"dur\":100.000,\"args\":{\"Event Type\":\"Communication\"}}",
                s ? ",\n" : "", 50 + rank, 1000 * s + (rank == 1 ? 250 : 0), 0);
    fputs("]}\n", f);
    fclose(f);
}

typedef struct log_seen {
    int lines, warnings;
    char text[4096];
} log_seen;

static void on_log(void *ctx, int warning, const char *line)
{
    log_seen *l = ctx;
    l->lines++;
    l->warnings += warning;
    strncat(l->text, line, sizeof l->text - strlen(l->text) - 2);
    strcat(l->text, "\n");
}

static void test_merge_api_errors(void)
{
    char a[300], out[300];
    snprintf(a, sizeof a, "%s/r0.json", dir);
    snprintf(out, sizeof out, "%s/job.pb", dir);
    write_rank(a, 0, "h");
    const char *paths[] = {a, NULL};
    CHECK_EQ(SP_EINVAL, sp_trace_merge(NULL, 1, out, NULL));
    CHECK_EQ(SP_EINVAL, sp_trace_merge(paths, 0, out, NULL));
    CHECK_EQ(SP_EINVAL, sp_trace_merge(paths, 2, out, NULL)); /* a NULL path */
    CHECK_EQ(SP_EINVAL, sp_trace_merge(paths, 1, NULL, NULL));
    CHECK_EQ(SP_ENOTSUP, sp_trace_merge(paths, 1, out, NULL));
    CHECK(strstr(sp_last_error(), "not supported for merge") != NULL);
    CHECK(access(out, F_OK) != 0);
    CHECK_EQ(SP_EINVAL, sp_trace_merge(paths, 1, a, NULL)); /* over its input */
    unlink(a);
}

static void test_merge_api_log_and_load(void)
{
    char r0[300], r1[300], out[300];
    snprintf(r0, sizeof r0, "%s/r0.json", dir);
    snprintf(r1, sizeof r1, "%s/r1.json", dir);
    snprintf(out, sizeof out, "%s/job.json", dir);
    write_rank(r0, 0, "a");
    write_rank(r1, 1, "b"); /* 250 us ahead, on another host */
    const char *paths[] = {r1, r0};
    sp_merge_options o;
    sp_merge_options_init(&o);
    log_seen seen = {0};
    o.log = on_log;
    o.log_ctx = &seen;
    CHECK_OK(sp_trace_merge(paths, 2, out, &o));
    CHECK(strstr(seen.text, "host b (rank 1): clock offset -250.000 us") != NULL);
    CHECK(strstr(seen.text, "ranks have no file (rank 2)") != NULL);
    CHECK_EQ(1, seen.warnings);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(out, NULL, &r));
    sp_result_release(r);
    FILE *f = fopen(out, "r");
    char text[8192] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    CHECK(strstr(text, "\"args\":{\"name\":\"rank 0 (a, pid 50)\"}") != NULL);
    CHECK(strstr(text, "\"args\":{\"name\":\"rank 1 (b, pid 51)\"}") != NULL);
    CHECK(strstr(text, "\"pid\":1,\"tid\":1,\"ts\":0.000,\"dur\":100.000") !=
          NULL); /* shifted onto rank 0 */
    CHECK(strstr(text, "\"offset_ns\": -250000") != NULL);
    unlink(r0);
    unlink(r1);
    unlink(out);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_merge_api_errors);
    RUN_TEST(test_merge_api_log_and_load);
    rmdir(dir);
    return TEST_SUMMARY();
}
