/* test_json_compat.c: the rules the viewer compatibility suite (make compat,
 * tests/compat) found, enforced here without the viewers:
 *  - the TensorBoard plugin nests host ranges with doubles (ts + dur); in a
 *    *.pt.trace.json file a range that ends exactly where its sibling starts
 *    must not, as doubles, end after that sibling's ts, or the plugin drops
 *    the sibling ("ranges on the same thread should not intersect"). The
 *    test replays the plugin's tree building (op_tree.py) on the written
 *    text, parsed with strtod as Python's float() does;
 *  - other file names keep exact durations;
 *  - distributedInfo takes the rank and world size from the launcher's
 *    environment (RANK, WORLD_SIZE, OMPI_COMM_WORLD_*, PMI_*, LOCAL_RANK),
 *    written as HTA's regex "rank":\s+(\d+) needs. */
#include "export.h"
#include "fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *read_file(const char *path)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    char *data = f && fstat(fileno(f), &st) == 0 ? malloc((size_t)st.st_size + 1) : NULL;
    size_t n = data ? fread(data, 1, (size_t)st.st_size, f) : 0;
    if (f) fclose(f);
    if (data) data[n] = '\0';
    return data;
}

/* Exports r to /tmp/<prefix>XXXXXX<suffix> and returns the text (free it). */
static char *export_as(const sp_result *r, const char *suffix)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/sp_json_compat_XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    CHECK(fd >= 0);
    if (fd < 0) return NULL;
    close(fd);
    CHECK_EQ(SP_OK, sp__export(r, path, SP_FORMAT_JSON));
    char *text = read_file(path);
    CHECK(text != NULL);
    remove(path);
    return text;
}

#define N_RANGES 600

/* One thread of ProfileSteps, each holding operators that touch: op k ends
 * at the very ns op k + 1 starts, placed late in the base time's quarter
 * (ts about 7.5e12 us, where a double's step is about 1 ns). Offsets vary so
 * that some sums round up. */
static sp_result *touching_result(void)
{
    static fixture_range ranges[N_RANGES];
    sp_result *r = sp__result_new();
    int64_t t = sp__base_time_ns() + 7500000000000000ll + 123;
    r->span_start_ns = t;
    r->meta.pid = 77;
    size_t n = 0;
    for (int step = 0; n + 21 <= N_RANGES; step++) {
        int64_t s = t;
        size_t at = n++;
        for (int k = 0; k < 20; k++) {
            int64_t d = 1000 + (step * 20 + k) * 7919 % 4999; /* ns, pseudo-random */
            ranges[n++] = (fixture_range){"op", SP_EVENT_OPERATOR, t, t + d};
            t += d; /* the next op starts where this one ends */
        }
        t += 17;
        ranges[at] = (fixture_range){"ProfileStep#1", SP_EVENT_PROFILE_STEP, s - 5, t};
        t += 10;
    }
    fixture_add_thread(r, 77, "main", ranges, n);
    r->span_end_ns = t + 1000;
    return r;
}

typedef struct xevent {
    double ts, end; /* as the plugin computes them: float(ts), float(ts) + float(dur) */
    long long dur_ns;
    long long ts_ns;
} xevent;

/* The host X events of tid 77 in file order, ts and dur parsed as Python
 * does (correctly rounded), and their exact ns from the 3-decimal text. */
static size_t host_events(const char *text, xevent *out, size_t max)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, "\"pid\":77,\"tid\":77,\"ts\":")) != NULL && n < max;) {
        const char *line = p;
        while (line > text && line[-1] != '\n') line--;
        p += strlen("\"pid\":77,\"tid\":77,\"ts\":");
        if (strncmp(line, "{\"ph\":\"X\"", 9) != 0) continue;
        char *end;
        double ts = strtod(p, &end);
        long long ts_ns = llround(ts * 1000.0); /* exact below 2^53 ns */
        const char *d = strstr(end, "\"dur\":");
        if (!d) break;
        double dur = strtod(d + 6, NULL);
        out[n++] = (xevent){ts, ts + dur, llround(dur * 1000.0), ts_ns};
    }
    return n;
}

/* torch_tb_profiler's op_tree.py build_tree_relationship over ev (sorted by
 * ts as the plugin sorts, stable): returns the number of "ranges on the same
 * thread should not intersect" errors. */
static int plugin_intersections(const xevent *ev, size_t n)
{
    double stack[64];
    int depth = 0, errors = 0;
    stack[depth++] = 1e300; /* CallTreeRoot */
    for (size_t i = 0; i < n; i++) {
        for (;;) {
            double tail_end = stack[depth - 1];
            if (ev[i].ts < tail_end) {
                if (ev[i].end <= tail_end) {
                    if (depth < 64) stack[depth++] = ev[i].end;
                } else {
                    errors++;
                }
                break;
            }
            depth--;
        }
    }
    return errors;
}

static void test_json_compat_touching_ranges_nest_in_the_plugin(void)
{
    sp_result *r = touching_result();
    static xevent ev[N_RANGES];
    char *pt = export_as(r, ".pt.trace.json");
    char *plain = export_as(r, ".json");
    if (pt && plain) {
        /* Exact durations trip the plugin here: the case is real. */
        size_t n = host_events(plain, ev, N_RANGES);
        CHECK_EQ(r->threads[0].count, n);
        int exact_errors = plugin_intersections(ev, n);
        CHECK(exact_errors > 0);
        for (size_t i = 0; i < n; i++) {
            const sp__event *e = &r->threads[0].events[i];
            CHECK_EQ(e->end_ns - e->start_ns, ev[i].dur_ns); /* .json: exact */
        }
        /* In the plugin's file, none; each dur cut by at most 3 ns, ts exact. */
        n = host_events(pt, ev, N_RANGES);
        CHECK_EQ(r->threads[0].count, n);
        CHECK_EQ(0, plugin_intersections(ev, n));
        int cut = 0;
        for (size_t i = 0; i < n; i++) {
            const sp__event *e = &r->threads[0].events[i];
            long long exact = e->end_ns - e->start_ns;
            CHECK_EQ(e->start_ns - sp__base_time_ns(), ev[i].ts_ns);
            CHECK(ev[i].dur_ns <= exact && ev[i].dur_ns >= exact - 3);
            cut += ev[i].dur_ns != exact;
        }
        CHECK(cut > 0);
        printf("touching ranges: %d plugin errors with exact durations, %d durations cut\n",
               exact_errors, cut);
    }
    free(pt);
    free(plain);
    sp__result_free(r);
}

/* Ops that touch, each with an inner range ending at the very ns its op
 * ends (a parent and child with equal ends): cutting the op alone would
 * leave the child sticking out, in exact ns and in the plugin's doubles. */
static void test_json_compat_equal_ends_stay_nested(void)
{
    enum { OPS = 150 };
    static fixture_range ranges[1 + 2 * OPS];
    static xevent ev[1 + 2 * OPS];
    sp_result *r = sp__result_new();
    int64_t t = sp__base_time_ns() + 7600000000000000ll + 311;
    r->span_start_ns = t;
    r->meta.pid = 77;
    size_t n = 1;
    int64_t s = t;
    for (int k = 0; k < OPS; k++) {
        int64_t d = 1000 + k * 7919 % 4999;
        ranges[n++] = (fixture_range){"op", SP_EVENT_OPERATOR, t, t + d};
        ranges[n++] = (fixture_range){"inner", SP_EVENT_OPERATOR_INNER, t + d / 3, t + d};
        t += d;
    }
    ranges[0] = (fixture_range){"ProfileStep#1", SP_EVENT_PROFILE_STEP, s, t};
    fixture_add_thread(r, 77, "main", ranges, n);
    r->span_end_ns = t + 1000;
    char *pt = export_as(r, ".pt.trace.json");
    if (pt) {
        size_t got = host_events(pt, ev, n);
        CHECK_EQ(n, got);
        CHECK_EQ(0, plugin_intersections(ev, got));
        const sp__thread *th = &r->threads[0];
        for (size_t i = 0; i < got && i < th->count; i++) {
            int32_t parent = th->events[i].parent;
            if (parent < 0) continue;
            /* exact ns: a child never ends after its parent as written */
            CHECK(ev[i].ts_ns + ev[i].dur_ns <= ev[parent].ts_ns + ev[parent].dur_ns);
            CHECK(ev[i].end <= ev[parent].end);
            CHECK(th->events[i].end_ns - th->events[i].start_ns - ev[i].dur_ns <= 3);
        }
    }
    free(pt);
    sp__result_free(r);
}

/* Times small enough for exact doubles are never cut, even in the plugin's
 * file (the golden lines of the other tests stay as they are). */
static void test_json_compat_small_times_are_exact(void)
{
    sp_result *r = sp__result_new();
    int64_t t = sp__base_time_ns() + 1000000;
    r->span_start_ns = t;
    r->span_end_ns = t + 100000;
    r->meta.pid = 77;
    const fixture_range ranges[] = {
        {"a", SP_EVENT_OPERATOR, t + 1, t + 1001},
        {"b", SP_EVENT_OPERATOR, t + 1001, t + 2002},
    };
    fixture_add_thread(r, 77, "main", ranges, 2);
    char *text = export_as(r, ".pt.trace.json");
    if (text) {
        CHECK(strstr(text, "\"ts\":1000.001,\"dur\":1.000}") != NULL);
        CHECK(strstr(text, "\"ts\":1001.001,\"dur\":1.001}") != NULL);
    }
    free(text);
    sp__result_free(r);
}

static void clear_rank_env(void)
{
    const char *vars[] = {"RANK",     "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                          "PMI_RANK", "PMI_SIZE",   "LOCAL_RANK",           "LOCAL_WORLD_SIZE",
                          "STEPPROF_DIST_BACKEND",  "PADDLE_DISTRI_BACKEND"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

/* Sets "NAME=VALUE ..." pairs after clearing every rank variable, exports a
 * small result (with `gpus` devices), and checks its distributedInfo line:
 * backend `backend`, or none when it is NULL (trace-format.md §2 item 3). */
static void check_dist_backend(const char *env, long rank, long world, int ranked,
                               const char *backend, int gpus)
{
    clear_rank_env();
    char copy[256];
    snprintf(copy, sizeof copy, "%s", env);
    char *save = NULL;
    for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = '\0';
        setenv(kv, eq + 1, 1);
    }
    long r_got = -1, w_got = -1;
    CHECK_EQ(ranked, sp__dist_info(&r_got, &w_got));
    CHECK_EQ(rank, r_got);
    CHECK_EQ(world, w_got);
    sp_result *r = sp__result_new();
    sp__dist_meta_fill(&r->meta, NULL);
    r->span_start_ns = sp__base_time_ns() + 1000;
    r->span_end_ns = r->span_start_ns + 1000;
    if (gpus) {
        r->device_props = sp__alloc(sizeof *r->device_props);
        CHECK(r->device_props != NULL);
        if (r->device_props) {
            memset(r->device_props, 0, sizeof *r->device_props);
            r->device_prop_count = 1;
        }
    }
    char *text = export_as(r, ".pt.trace.json");
    char line[200], with[64] = "";
    if (backend) snprintf(with, sizeof with, "\"backend\": \"%s\", ", backend);
    snprintf(line, sizeof line, "\n\"distributedInfo\":{%s\"rank\": %ld, \"world_size\": %ld, ",
             with, rank, world);
    if (text && !strstr(text, line)) CHECK_FAIL_("%s: no line %s", env, line);
    /* HTA reads the first "rank": <digits> of the text: this one. */
    if (text)
        CHECK(strstr(text, "\"rank\": ") == strstr(text, "\"distributedInfo\"") + 19 + strlen(with));
    free(text);
    sp__result_free(r);
    clear_rank_env();
}

/* A run without a backend variable and without GPUs: "gloo" when
 * distributed, no backend in a single process. */
static void check_dist(const char *env, long rank, long world, int ranked)
{
    check_dist_backend(env, rank, world, ranked, world > 1 ? "gloo" : NULL, 0);
}

static void test_json_compat_distributed_info_from_the_environment(void)
{
    check_dist("", 0, 1, 0);
    check_dist("RANK=2 WORLD_SIZE=4", 2, 4, 1);
    check_dist("RANK=2 WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=7 OMPI_COMM_WORLD_SIZE=9", 2, 4, 1);
    check_dist("OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=8", 3, 8, 1);
    check_dist("PMI_RANK=1 PMI_SIZE=2", 1, 2, 1);
    check_dist("LOCAL_RANK=1 LOCAL_WORLD_SIZE=2", 1, 2, 1);
    check_dist("LOCAL_RANK=1 RANK=5 WORLD_SIZE=8", 5, 8, 1); /* the global rank wins */
    check_dist("RANK=abc PMI_RANK=4 PMI_SIZE=6", 4, 6, 1);    /* not a number: skipped */
    check_dist("RANK=-1 WORLD_SIZE=4", 0, 4, 0);
    check_dist("RANK=5 WORLD_SIZE=2", 5, 6, 1); /* a world that cannot hold the rank */
    check_dist("WORLD_SIZE=4", 0, 4, 0);
}

/* Issue 17: the backend was "nccl" even in a single CPU process. */
static void test_json_compat_distributed_backend_is_real(void)
{
    check_dist_backend("", 0, 1, 0, NULL, 0);
    check_dist_backend("", 0, 1, 0, NULL, 1);
    check_dist_backend("RANK=0 WORLD_SIZE=1", 0, 1, 1, NULL, 1);
    check_dist_backend("STEPPROF_DIST_BACKEND=nccl", 0, 1, 0, NULL, 1); /* one process */
    check_dist_backend("RANK=1 WORLD_SIZE=2", 1, 2, 1, "gloo", 0);
    check_dist_backend("RANK=1 WORLD_SIZE=2", 1, 2, 1, "nccl", 1);
    check_dist_backend("RANK=1 WORLD_SIZE=2 STEPPROF_DIST_BACKEND=mpi", 1, 2, 1, "mpi", 1);
    check_dist_backend("RANK=1 WORLD_SIZE=2 PADDLE_DISTRI_BACKEND=bkcl", 1, 2, 1, "bkcl", 1);
    check_dist_backend("RANK=1 WORLD_SIZE=2 STEPPROF_DIST_BACKEND=gloo PADDLE_DISTRI_BACKEND=nccl",
                       1, 2, 1, "gloo", 1);
    /* Not a plain name (a quote would break the JSON): the default instead. */
    check_dist_backend("RANK=1 WORLD_SIZE=2 STEPPROF_DIST_BACKEND=a\"b", 1, 2, 1, "gloo", 0);
    check_dist_backend("RANK=1 WORLD_SIZE=2 STEPPROF_DIST_BACKEND="
                       "a_name_that_is_far_too_long_for_the_buffer", 1, 2, 1, "nccl", 1);
}

int main(void)
{
    RUN_TEST(test_json_compat_touching_ranges_nest_in_the_plugin);
    RUN_TEST(test_json_compat_equal_ends_stay_nested);
    RUN_TEST(test_json_compat_small_times_are_exact);
    RUN_TEST(test_json_compat_distributed_info_from_the_environment);
    RUN_TEST(test_json_compat_distributed_backend_is_real);
    return TEST_SUMMARY();
}
