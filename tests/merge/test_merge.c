/* test_merge.c: the public entry of the merge (sp_trace_merge, merge.c):
 * bad arguments are refused with the right status before anything is
 * written; the log callback gets what was done and, flagged as warnings,
 * what was found; the merged file loads back with sp_result_load, one
 * process per rank, and sp_result_load_ranks reads it back as one result
 * per rank. (tests/merge/test_merge.py runs the CLI end to end.) */
#include "check.h"
#include "stepprof/stepprof.h"

#include <dirent.h>
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
    /* A .pb output of an input that is not JSON: refused, and neither the
     * output nor the temporary JSON beside it is left. */
    char bin[300];
    snprintf(bin, sizeof bin, "%s/r1.pb", dir);
    FILE *f = fopen(bin, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("\x08\x01", f);
        fclose(f);
    }
    const char *bad[] = {bin};
    CHECK_EQ(SP_ENOTSUP, sp_trace_merge(bad, 1, out, NULL));
    CHECK(strstr(sp_last_error(), "not a Chrome-trace JSON file") != NULL);
    CHECK(access(out, F_OK) != 0);
    DIR *dp = opendir(dir);
    int left = 0;
    for (struct dirent *e; dp && (e = readdir(dp));)
        left += strstr(e->d_name, "merging") != NULL;
    if (dp) closedir(dp);
    CHECK_EQ(0, left);
    unlink(bin);
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

/* Rank 1's file also has a GPU row (Kineto's pid = device 0) with one kernel. */
static void write_gpu_rank(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"schemaVersion\":1,\"distributedInfo\":{\"backend\": \"nccl\", \"rank\": 1, "
          "\"world_size\": 2, \"local_rank\": 0, \"local_world_size\": 1, \"hostname\": \"b\", "
          "\"job\": \"J\"},\"baseTimeNanoseconds\":1000000000,\"traceEvents\":[\n"
          "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step\",\"pid\":77,\"tid\":3,"
          "\"ts\":10.000,\"dur\":500.000},\n"
          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,"
          "\"ts\":20.000,\"dur\":100.000,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}}\n]}\n",
          f);
    fclose(f);
}

static int text_has(const sp_result *r, sp_summary_view view, const char *what)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return 0;
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << view;
    sp_result_summary(r, &o, m);
    fclose(m);
    int found = buf && strstr(buf, what) != NULL;
    free(buf);
    return found;
}

static void test_load_ranks(void)
{
    char r0[300], r1[300], out[300];
    snprintf(r0, sizeof r0, "%s/r0.json", dir);
    snprintf(r1, sizeof r1, "%s/r1.json", dir);
    snprintf(out, sizeof out, "%s/job.json.gz", dir);
    write_rank(r0, 0, "a");
    write_gpu_rank(r1);
    const char *paths[] = {r0, r1};
    sp_merge_options o;
    sp_merge_options_init(&o);
    o.force = 1; /* world sizes 3 and 2 */
    CHECK_OK(sp_trace_merge(paths, 2, out, &o));
    sp_result **v = NULL;
    size_t n = 0;
    CHECK_OK(sp_result_load_ranks(out, NULL, &v, &n));
    CHECK_EQ(2, (int)n);
    if (n == 2) {
        sp_dist_info d;
        sp_result_dist_info(v[0], &d);
        CHECK_EQ(0, (int)d.rank);
        CHECK_EQ(3, (int)d.world_size);
        CHECK_STR_EQ("a", d.hostname);
        sp_result_dist_info(v[1], &d);
        CHECK_EQ(1, (int)d.rank);
        CHECK_EQ(2, (int)d.world_size);
        CHECK_EQ(0, (int)d.local_rank);
        CHECK_EQ(1, (int)d.local_world_size);
        CHECK_STR_EQ("b", d.hostname);
        CHECK_STR_EQ("J", d.job);
        CHECK_STR_EQ("nccl", d.backend);
        /* Rank 0's five collectives, on its one thread; rank 1's step. */
        CHECK_EQ(1, (int)sp_result_thread_count(v[0]));
        sp_thread_info t;
        CHECK_OK(sp_result_thread(v[0], 0, &t));
        CHECK_EQ(5, (int)t.event_count);
        CHECK_EQ(1, (int)sp_result_thread_count(v[1]));
        CHECK_OK(sp_result_thread(v[1], 0, &t));
        CHECK_EQ(1, (int)t.event_count);
        /* The GPU row is rank 1's device 0 again, not a host process. */
        CHECK(text_has(v[1], SP_VIEW_KERNEL, "gemm_kernel"));
        CHECK(!text_has(v[0], SP_VIEW_KERNEL, "gemm_kernel"));
        CHECK_EQ(0, (int)sp_result_counter(v[0], SP_COUNTER_LOAD_SKIPPED));
    }
    sp_results_release(v, n);
    sp_results_release(NULL, 0);

    /* The same as .pb: the ranks come back with their own metadata, and
     * the file read as one process holds both ranks' threads. */
    char pb[300];
    snprintf(pb, sizeof pb, "%s/job.pb", dir);
    CHECK_OK(sp_trace_merge(paths, 2, pb, &o));
    CHECK_OK(sp_result_load_ranks(pb, NULL, &v, &n));
    CHECK_EQ(2, (int)n);
    if (n == 2) {
        sp_dist_info d;
        sp_result_dist_info(v[1], &d);
        CHECK_EQ(1, (int)d.rank);
        CHECK_STR_EQ("nccl", d.backend);
        CHECK_EQ(1, (int)sp_result_thread_count(v[0]));
        CHECK(text_has(v[1], SP_VIEW_KERNEL, "gemm_kernel"));
        CHECK(!text_has(v[0], SP_VIEW_KERNEL, "gemm_kernel"));
    }
    sp_results_release(v, n);
    sp_result *whole = NULL;
    CHECK_OK(sp_result_load(pb, NULL, &whole));
    CHECK_EQ(2, (int)sp_result_thread_count(whole));
    sp_result_release(whole);
    unlink(pb);

    /* A rank's own file is one result, as sp_result_load reads it. */
    CHECK_OK(sp_result_load_ranks(r0, NULL, &v, &n));
    CHECK_EQ(1, (int)n);
    if (n == 1) {
        sp_dist_info d;
        sp_result_dist_info(v[0], &d);
        CHECK_EQ(0, (int)d.rank);
    }
    sp_results_release(v, n);
    CHECK_EQ(SP_EINVAL, sp_result_load_ranks(NULL, NULL, &v, &n));
    CHECK_EQ(SP_EINVAL, sp_result_load_ranks(out, NULL, NULL, &n));
    CHECK_EQ(SP_EIO, sp_result_load_ranks("/nonexistent/x.json", NULL, &v, &n));
    CHECK(v == NULL && n == 0);

    /* Cut short inside its events: an error naming the file, no result. */
    char cut[300];
    snprintf(cut, sizeof cut, "%s/cut.json", dir);
    CHECK_OK(sp_trace_merge(paths, 2, cut, &o));
    FILE *f = fopen(cut, "r+");
    CHECK(f != NULL);
    if (f) {
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fclose(f);
        CHECK(truncate(cut, size / 2) == 0);
    }
    CHECK_EQ(SP_EFORMAT, sp_result_load_ranks(cut, NULL, &v, &n));
    CHECK(strstr(sp_last_error(), "cut.json") != NULL);
    unlink(cut);
    unlink(r0);
    unlink(r1);
    unlink(out);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_merge_api_errors);
    RUN_TEST(test_merge_api_log_and_load);
    RUN_TEST(test_load_ranks);
    rmdir(dir);
    return TEST_SUMMARY();
}
