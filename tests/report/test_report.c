/* test_report.c: sp_result_report on synthetic results. Each case writes a
 * page into report_cases/ (the working directory is the build's tests
 * folder) and checks what can be checked without a browser: the page is
 * one document with exactly two scripts, the data holds no '<', '>' or '&'
 * (so no name can close its script element), names and the title are
 * escaped, the caps on the timeline hold, the page stays small, bad
 * arguments and failed allocations give a status and no file.
 * tests/report/browser_check.py then opens every page of report_cases/ in
 * headless Chromium. */
#include "analyze/synth_ranks.h"
#include "analyze/synth_steps.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define US 1000ll
#define CASES "report_cases"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = s ? fread(s, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!s) return NULL;
    s[got] = '\0';
    *len = got;
    return s;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Writes r's page as report_cases/<name>.html (with baseline when given),
 * checks its shape and returns the page (free it). */
static char *write_case(const char *name, sp_result *r, sp_result *baseline, const char *title)
{
    char path[256];
    snprintf(path, sizeof path, CASES "/%s.html", name);
    sp_report_options o;
    sp_report_options_init(&o);
    o.baseline = baseline;
    o.title = title;
    o.source = name;
    CHECK_OK(sp_result_report(r, &o, path));
    size_t len = 0;
    char *page = read_file(path, &len);
    CHECK(page != NULL);
    if (!page) return NULL;
    CHECK_EQ(0, strncmp(page, "<!DOCTYPE html>\n", 16));
    CHECK_EQ(2, count(page, "<script"));
    CHECK_EQ(2, count(page, "</script>"));
    CHECK(strstr(page, "</body></html>\n") != NULL);
    const char *open = "<script type=\"application/json\" id=\"sp-data\">";
    char *data = strstr(page, open);
    CHECK(data != NULL);
    if (data) {
        data += strlen(open);
        char *end = strstr(data, "</script>");
        CHECK(end != NULL);
        for (char *p = data; end && p < end; p++)
            if (*p == '<' || *p == '>' || *p == '&') {
                CHECK_FAIL_("%s: raw '%c' in the data at byte %td", name, *p, p - page);
                break;
            }
    }
    return page;
}

static sp_result *gpu_steps(int64_t matmul)
{
    synth_step s = {.dl = 200 * US, .fwd = 300 * US, .matmul = matmul, .bwd = 400 * US, .opt = 60 * US,
                    .other = 40 * US, .other_name = "log_metrics", .kernels = 6, .kernel_ns = 20 * US};
    synth_step v[10];
    for (int i = 0; i < 10; i++)
        v[i] = s;
    v[7].dl = 900 * US; /* one slow step */
    sp_result *r = synth_build(v, 10, 1);
    snprintf(r->meta.process_name, sizeof r->meta.process_name, "train_gpu");
    sp__thread *t = &r->threads[0];
    for (int i = 0; i < 40; i++) /* a saw-tooth of allocations */
        fixture_add_mem(r, t, 1000000 + i * 200 * US, i % 4 == 3 ? 1 : 0, "Place(gpu:0)", 0x1000u + (uint64_t)i,
                        i % 4 == 3 ? -3 * 4096 : 4096, (uint64_t)(i % 4 == 3 ? 0 : (i % 4 + 1) * 4096),
                        1 << 20, (uint64_t)(4 * 4096), 1 << 20);
    return r;
}

static void test_report_full_and_baseline(void)
{
    sp_result *r = gpu_steps(250 * US);
    char *page = write_case("full", r, NULL, NULL);
    if (page) {
        CHECK(strstr(page, "<title>train_gpu - stepprof report</title>") != NULL);
        CHECK(strstr(page, "\"baseline\": null") != NULL);
        CHECK(strstr(page, "\"gpu_util\": {") != NULL);
        CHECK(strstr(page, "\"memory\": [{\"place\": \"Place(gpu:0)\"") != NULL);
        CHECK(strstr(page, "\"top_kernels\": [[\"gemm_kernel\"") != NULL);
        CHECK(strstr(page, "\"id\": \"dataloader_bound\"") != NULL);
        /* The slow step (#8) is marked. The median: the 5th of 10 in the
         * order of length, then number (1..7, 9, 10, 8). */
        CHECK(strstr(page, "\"slowest\": 8, \"median_step\": 5") != NULL);
        CHECK(strstr(page, "\"timeline\": {\"step\": 5,") != NULL);
    }
    free(page);
    sp_result *slower = gpu_steps(300 * US);
    page = write_case("baseline", slower, r, "matmul, 50 us slower");
    if (page) {
        CHECK(strstr(page, "\"baseline\": {\"source\": ") != NULL);
        CHECK(strstr(page, "<title>matmul, 50 us slower - stepprof report</title>") != NULL);
    }
    free(page);
    sp_result_release(slower);
    sp_result_release(r);
}

/* Names made to break out of the data or the markup, thread and process
 * names included; bytes that are not UTF-8 must come out as U+FFFD. */
static void test_report_hostile_names(void)
{
    static char huge[12000];
    memset(huge, 'x', sizeof huge - 1);
    static const char *const names[] = {
        "</script><script>window.sp_pwned = 1</script>",
        "<img src=x onerror=\"window.sp_pwned=2\">",
        "quote\" and 'apostrophe' and back\\slash",
        "line\nbreak\ttab\r",
        "bad utf-8: \xff\xfe \xc3( end",
        "<!-- comment --> & ampersand",
        "\xe2\x80\xa8 line separator \xe2\x80\xa9",
    };
    fixture_range v[2 + 2 * 7 + 1];
    size_t n = 0;
    v[n++] = (fixture_range){"ProfileStep#0", SP_EVENT_PROFILE_STEP, 1000, 1000 + 1000 * US};
    for (size_t i = 0; i < 7; i++) {
        v[n++] = (fixture_range){names[i], SP_EVENT_OPERATOR, 1000 + (int64_t)i * 100 * US,
                                 1000 + (int64_t)i * 100 * US + 50 * US};
        v[n++] = (fixture_range){names[i], SP_EVENT_USER_DEFINED, 1000 + (int64_t)i * 100 * US + 60 * US,
                                 1000 + (int64_t)i * 100 * US + 90 * US};
    }
    v[n++] = (fixture_range){huge, SP_EVENT_OPERATOR, 1000 + 950 * US, 1000 + 990 * US};
    sp_result *r = sp__result_new();
    snprintf(r->meta.process_name, sizeof r->meta.process_name, "</title><script>alert(1)</script>");
    fixture_add_thread(r, 7, "<b>thread</b> \"seven\"", v, n);
    fixture_add_device(r, names[0], SP_EVENT_KERNEL, 1000 + 10 * US, 1000 + 20 * US, 0, 7, 1);
    char *page = write_case("hostile", r, NULL, NULL);
    if (page) {
        CHECK(strstr(page, "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt; - stepprof report</title>") !=
              NULL);
        CHECK(strstr(page, "\\u003c/script\\u003e\\u003cscript\\u003ewindow.sp_pwned = 1") != NULL);
        CHECK(strstr(page, "bad utf-8: \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd( end") != NULL);
        CHECK(strstr(page, "sp_pwned") != NULL);
        CHECK(strstr(page, "onerror") != NULL); /* as text in the data, never as markup: */
        CHECK(strstr(page, "<img") == NULL);
    }
    free(page);
    sp_result_release(r);
}

static void test_report_edges(void)
{
    /* No steps: ranges only. */
    fixture_range plain[] = {{"forward", SP_EVENT_FORWARD, 0, 500 * US},
                             {"matmul", SP_EVENT_OPERATOR, 10 * US, 400 * US}};
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", plain, 2);
    char *page = write_case("no_steps", r, NULL, NULL);
    if (page) {
        CHECK(strstr(page, "No steps (no ProfileStep ranges)") != NULL);
        CHECK(strstr(page, "\"steps\": null") != NULL);
        CHECK(strstr(page, "\"timeline\": null") != NULL);
        CHECK(strstr(page, "\"diagnosis\": null") != NULL);
    }
    free(page);
    sp_result_release(r);

    /* One step. */
    synth_step s = {.dl = 10 * US, .fwd = 30 * US, .bwd = 40 * US, .opt = 5 * US};
    r = synth_same(s, 1);
    page = write_case("one_step", r, NULL, NULL);
    if (page) CHECK(strstr(page, "One step only") != NULL);
    free(page);
    sp_result_release(r);

    /* Drops. */
    r = synth_same(s, 3);
    r->counters[SP_COUNTER_HOST_DROPPED] = 12;
    r->threads[0].dropped = 12;
    page = write_case("drops", r, NULL, NULL);
    if (page) {
        CHECK(strstr(page, "\"host_dropped\": 12") != NULL);
        CHECK(strstr(page, "12 events were dropped") != NULL);
    }
    free(page);
    sp_result_release(r);

    /* Only GPU records. */
    r = sp__result_new();
    for (int i = 0; i < 5; i++)
        fixture_add_device(r, "kernel_only", SP_EVENT_KERNEL, i * 10 * US, i * 10 * US + 5 * US, 0, 7,
                           (uint32_t)i + 1);
    r->span_start_ns = 0;
    r->span_end_ns = 60 * US;
    page = write_case("gpu_only", r, NULL, NULL);
    if (page) CHECK(strstr(page, "No host events: only GPU records") != NULL);
    free(page);
    sp_result_release(r);

    /* Nothing at all. */
    r = sp__result_new();
    page = write_case("empty", r, NULL, NULL);
    if (page) {
        CHECK(strstr(page, "No events were recorded in this span") != NULL);
        CHECK(strstr(page, "\"tables\": []") != NULL);
    }
    free(page);
    sp_result_release(r);
}

/* 10,000 threads in one step: the timeline keeps the 64 busiest lanes. */
static void test_report_many_threads(void)
{
    sp_result *r = sp__result_new();
    fixture_range step[] = {{"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 10000 * US}};
    fixture_add_thread(r, 1, "main", step, 1);
    static char names[10000][16];
    for (int i = 0; i < 10000; i++) {
        snprintf(names[i], sizeof names[i], "work_%d", i % 50);
        fixture_range w[] = {{names[i], SP_EVENT_USER_DEFINED, i * US, i * US + (i % 97 + 1) * 10}};
        fixture_add_thread(r, (uint64_t)i + 2, "worker", w, 1);
    }
    char *page = write_case("threads_10k", r, NULL, NULL);
    if (page) {
        CHECK(strstr(page, "\"threads\": 10001") != NULL);
        CHECK(strstr(page, "\"lanes_shown\": 64,") != NULL);
    }
    free(page);
    sp_result_release(r);
}

/* A step of 30,000 events: the page keeps the 20,000 longest and stays
 * far under 2 MB. */
static void test_report_big_step(void)
{
    enum { N = 30000 };
    fixture_range *v = calloc(N + 1, sizeof *v);
    v[0] = (fixture_range){"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, (int64_t)N * 1000};
    for (int i = 0; i < N; i++)
        v[i + 1] = (fixture_range){"tiny_op", SP_EVENT_OPERATOR, (int64_t)i * 1000, (int64_t)i * 1000 + 100 + i % 500};
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", v, N + 1);
    free(v);
    char *page = write_case("big_step", r, NULL, NULL);
    if (page) {
        CHECK(strstr(page, "\"events_total\": 30001, \"events_shown\": 20000,") != NULL);
        CHECK(strlen(page) < 2u * 1024 * 1024);
    }
    free(page);
    sp_result_release(r);
}

/* Four ranks, rank 2 loading 30 ms longer every third step: the page has
 * the cross-rank tables, and names the straggler. */
static void test_report_ranks(void)
{
    sp_result *r[RANKS];
    int64_t ids[RANKS];
    for (int i = 0; i < RANKS; i++) {
        r[i] = rank_result(i, 2, 30, 0);
        ids[i] = i;
    }
    sp_report_options o;
    sp_report_options_init(&o);
    o.ranks = (const sp_result *const *)r;
    o.rank_ids = ids;
    o.rank_count = RANKS;
    o.source = "rank 0";
    CHECK_OK(sp_result_report(r[0], &o, CASES "/ranks.html"));
    size_t len = 0;
    char *page = read_file(CASES "/ranks.html", &len);
    CHECK(page != NULL);
    if (page) {
        CHECK(strstr(page, "\"ranks\": {\"ids\": [0, 1, 2, 3], \"tables\": [{\"view\": \"Ranks\"") != NULL);
        CHECK(strstr(page, "\"stragglers\": 1}") != NULL);
        CHECK(strstr(page, "[\"row\", \"2\", \"Dataloader\", \"3\"") != NULL);
    }
    free(page);
    ids[3] = 1;
    CHECK_EQ(SP_EINVAL, sp_result_report(r[0], &o, CASES "/ranks_dup.html"));
    CHECK(strstr(sp_last_error(), "rank 1 is given twice") != NULL);
    CHECK(access(CASES "/ranks_dup.html", F_OK) != 0);
    for (int i = 0; i < RANKS; i++)
        sp_result_release(r[i]);
}

static void test_report_bad_arguments(void)
{
    sp_result *r = sp__result_new();
    CHECK_EQ(SP_EINVAL, sp_result_report(NULL, NULL, CASES "/x.html"));
    CHECK_EQ(SP_EINVAL, sp_result_report(r, NULL, NULL));
    CHECK_EQ(SP_EINVAL, sp_result_report(r, NULL, ""));
    CHECK(sp_result_report(r, NULL, CASES "/no/such/dir/x.html") != SP_OK);
    CHECK(strstr(sp_last_error(), "no/such/dir") != NULL);
    sp_result_release(r);
}

/* Every allocation the report makes fails once in turn: each run gives
 * SP_OK or SP_ENOMEM, and a failed one leaves no file behind. */
static void test_report_out_of_memory(void)
{
    sp_result *r = gpu_steps(250 * US);
    const char *path = CASES "/oom.html";
    int failures = 0;
    for (uint64_t nth = 1; nth < 400; nth++) {
        unlink(path);
        sp__alloc_fail_at(nth);
        sp_status s = sp_result_report(r, NULL, path);
        sp__alloc_fail_at(0);
        if (s == SP_OK) break;
        CHECK_EQ(SP_ENOMEM, s);
        CHECK(access(path, F_OK) != 0);
        failures++;
    }
    CHECK(failures > 10);
    CHECK_EQ(0, access(path, F_OK));
    unlink(path);
    sp_result_release(r);
}

int main(void)
{
    if (mkdir(CASES, 0777) != 0 && errno != EEXIST) {
        perror(CASES);
        return 1;
    }
    RUN_TEST(test_report_full_and_baseline);
    RUN_TEST(test_report_hostile_names);
    RUN_TEST(test_report_edges);
    RUN_TEST(test_report_many_threads);
    RUN_TEST(test_report_big_step);
    RUN_TEST(test_report_ranks);
    RUN_TEST(test_report_bad_arguments);
    RUN_TEST(test_report_out_of_memory);
    return TEST_SUMMARY();
}
