/* test_op_info.c: sp_profiler_add_op_info on a live profiler: an op's input
 * shapes, dtypes, call stack and FLOPs join the span's result attached to
 * the range containing its time, show in the trace's args and in the
 * Operator Summary's FLOPs column, and survive a .pb export and load; bad
 * arguments are refused with nothing added, odd names are repaired and
 * counted, ops outside the span are counted as out_of_window. */
#include "added_events.h"
#include "check.h"
#include "collect.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sp_profiler *make(void)
{
    sp_options o;
    sp_options_init(&o);
    o.record_shapes = true;
    o.with_flops = true;
    return make_quiet(&o);
}

static const sp__thread *thread_of(const sp_result *r, uint64_t tid)
{
    for (size_t i = 0; i < r->thread_count; i++)
        if (r->threads[i].tid == tid) return &r->threads[i];
    return NULL;
}

static const int64_t X_DIMS[] = {8, 16}, Y_DIMS[] = {16, 32};

/* A span holding one "matmul dygraph" Operator [a, b] on this thread and
 * the given ops; returns the stopped profiler. */
static sp_profiler *span_with(const sp_op_info *ops, size_t n, int64_t *a_out)
{
    sp_profiler *p = make();
    CHECK_OK(sp_profiler_start(p));
    int64_t a = realtime_ns();
    usleep(2000);
    int64_t b = realtime_ns();
    sp_external_event ev[] = {
        {(uint64_t)gettid(), SP_EVENT_OPERATOR, "matmul dygraph", 14, a, b},
        {(uint64_t)gettid(), SP_EVENT_OPERATOR_INNER, "matmul infer_meta", 17, a + 100000,
         a + 200000},
    };
    CHECK_OK(sp_profiler_add_events(p, ev, 2));
    sp_op_info *copy = malloc(sizeof *copy * (n ? n : 1));
    for (size_t i = 0; copy && i < n; i++) {
        copy[i] = ops[i];
        if (copy[i].time_ns == 0) copy[i].time_ns = a + 50000; /* in the op, before its child */
    }
    CHECK_OK(sp_profiler_add_op_info(p, copy, n));
    free(copy);
    CHECK_OK(sp_profiler_stop(p));
    if (a_out) *a_out = a;
    return p;
}

static sp_op_info matmul(void)
{
    static const sp_op_input in[] = {
        {"X", 1, X_DIMS, 2, "float32", 7},
        {"Y", 1, Y_DIMS, 2, "float32", 7},
    };
    return (sp_op_info){.tid = (uint64_t)gettid(),
                        .op_type = "matmul",
                        .op_type_len = 6,
                        .inputs = in,
                        .input_count = 2,
                        .callstack = "train.py(3);model.py(7)",
                        .callstack_len = 23,
                        .flops = 8192};
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* The Operator Summary of r as text. Owned: free. */
static char *operator_summary(const sp_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << SP_VIEW_OPERATOR;
    CHECK_OK(sp_result_summary(r, &o, f));
    fclose(f);
    return text;
}

/* The last cell of the row of the Operator Summary that starts with name. */
static void flops_cell(const char *summary, const char *name, char *out, size_t size)
{
    out[0] = '\0';
    for (const char *line = summary; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, name, strlen(name)) != 0 || line[strlen(name)] != ' ') continue;
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        while (end > line && end[-1] == ' ')
            end--;
        const char *start = end;
        while (start > line && start[-1] != ' ')
            start--;
        snprintf(out, size, "%.*s", (int)(end - start), start);
        return;
    }
}

static void test_op_info_joins_the_op_range(void)
{
    sp_op_info op = matmul();
    sp_profiler *p = span_with(&op, 1, NULL);
    const sp_result *r = sp_profiler_result(p);
    const sp__thread *t = r ? thread_of(r, (uint64_t)gettid()) : NULL;
    CHECK(t != NULL);
    if (!t) goto done;
    CHECK_U64_EQ(1, t->op_count);
    CHECK(t->ops[0].host >= 0);
    if (t->op_count != 1 || t->ops[0].host < 0) goto done;
    CHECK_STR_EQ("matmul dygraph", sp__result_name(r, t->events[t->ops[0].host].name));
    CHECK_U64_EQ(8192, t->ops[0].flops);
    CHECK_STR_EQ("matmul", sp__result_name(r, t->ops[0].op_type));
    CHECK_STR_EQ("train.py(3);model.py(7)", sp__result_name(r, t->ops[0].callstack));
    /* shapes: 2 keys, X: 1 shape [8, 16], Y: 1 shape [16, 32]; dtypes: 2 keys. */
    const uint64_t *w = t->op_words + t->ops[0].words;
    CHECK_U64_EQ(2, w[0]);
    CHECK_STR_EQ("X", sp__result_name(r, (uint32_t)w[1]));
    CHECK_U64_EQ(1, w[2]);
    CHECK_U64_EQ(2, w[3]);
    CHECK_U64_EQ(8, w[4]);
    CHECK_U64_EQ(16, w[5]);
    CHECK_U64_EQ(1, w[13]);
    CHECK_STR_EQ("float32", sp__result_name(r, (uint32_t)w[14]));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_OUT_OF_WINDOW));

    char dir[] = "/tmp/sp_op_info_XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    CHECK_OK(sp_result_export(r, path, SP_FORMAT_JSON));
    char *json = slurp(path);
    CHECK(json &&
          strstr(json, "\"Input Dims\":[[8,16],[16,32]],\"Input type\":[\"float32\",\"float32\"]"));
    CHECK(json && strstr(json, "\"Call stack\":\"train.py(3);model.py(7)\""));
    free(json);
    unlink(path);

    char *text = operator_summary(r), cell[64];
    flops_cell(text, "matmul dygraph", cell, sizeof cell);
    CHECK_STR_EQ("8192", cell);
    flops_cell(text, "  matmul infer_meta", cell, sizeof cell);
    CHECK_STR_EQ("-", cell);

    /* The .pb keeps them: the loaded result prints the same table. */
    snprintf(path, sizeof path, "%s/trace.pb", dir);
    CHECK_OK(sp_result_export_protobuf(r, path));
    sp_result *back = NULL;
    CHECK_OK(sp_result_load(path, NULL, &back));
    if (back) {
        const sp__thread *bt = thread_of(back, (uint64_t)gettid());
        CHECK(bt && bt->op_count == 1 && bt->ops[0].flops == 8192);
        char *again = operator_summary(back);
        flops_cell(again, "matmul dygraph", cell, sizeof cell);
        CHECK_STR_EQ("8192", cell);
        free(again);
        sp_result_release(back);
    }
    free(text);
    unlink(path);
    rmdir(dir);
done:
    sp_profiler_destroy(p);
}

/* Inputs with one key one after another are one key's list (concat's X). */
static void test_op_info_same_key_inputs_are_one_list(void)
{
    static const int64_t d[] = {4, 2};
    sp_op_input in[] = {{"X", 1, d, 2, "float32", 7},
                        {"X", 1, d, 1, "float16", 7},
                        {"axis", 4, NULL, 0, "int64", 5}};
    sp_op_info op = {.tid = (uint64_t)gettid(),
                     .op_type = "concat",
                     .op_type_len = 6,
                     .inputs = in,
                     .input_count = 3};
    sp_profiler *p = span_with(&op, 1, NULL);
    const sp_result *r = sp_profiler_result(p);
    const sp__thread *t = r ? thread_of(r, (uint64_t)gettid()) : NULL;
    CHECK(t && t->op_count == 1);
    if (t && t->op_count == 1) {
        static const uint64_t want_shapes[] = {2, 0, 2, 2, 4, 2, 1, 4, 0, 1, 0};
        const uint64_t *w = t->op_words + t->ops[0].words;
        for (size_t i = 0; i < sizeof want_shapes / sizeof *want_shapes; i++)
            if (i != 1 && i != 8) CHECK_U64_EQ(want_shapes[i], w[i]);
        CHECK_STR_EQ("axis", sp__result_name(r, (uint32_t)w[8]));
        CHECK_U64_EQ(2, w[11]); /* dtypes: 2 keys */
        CHECK_U64_EQ(2, w[13]); /* X: 2 dtypes */
        CHECK_STR_EQ("float16", sp__result_name(r, (uint32_t)w[15]));
        CHECK_U64_EQ(0, t->ops[0].flops);
        char *text = operator_summary(r), cell[64];
        flops_cell(text, "matmul dygraph", cell, sizeof cell);
        CHECK_STR_EQ("0", cell);
        free(text);
    }
    sp_profiler_destroy(p);
}

static void test_op_info_bad_arguments_add_nothing(void)
{
    sp_op_info ok = matmul();
    CHECK_EQ(SP_EINVAL, sp_profiler_add_op_info(NULL, &ok, 1));
    sp_profiler *p = make();
    CHECK_EQ(SP_ESTATE, sp_profiler_add_op_info(p, &ok, 1)); /* no span yet */
    CHECK_OK(sp_profiler_start(p));
    CHECK_EQ(SP_EINVAL, sp_profiler_add_op_info(p, NULL, 1));
    CHECK_OK(sp_profiler_add_op_info(p, NULL, 0));
    int64_t dims[SP_OP_RANK_MAX + 1] = {0};
    sp_op_input huge = {"X", 1, dims, SP_OP_RANK_MAX + 1, "float32", 7};
    sp_op_input no_dims = {"X", 1, NULL, 2, "float32", 7};
    sp_op_input no_key = {NULL, 3, dims, 1, "float32", 7};
    sp_op_input no_dtype = {"X", 1, dims, 1, NULL, 7};
    const sp_op_input *bad_inputs[] = {&huge, &no_dims, &no_key, &no_dtype};
    for (size_t i = 0; i < 4; i++) {
        sp_op_info ops[2] = {ok, ok};
        ops[1].inputs = bad_inputs[i];
        ops[1].input_count = 1;
        CHECK_EQ(SP_EINVAL, sp_profiler_add_op_info(p, ops, 2)); /* the good first one too */
    }
    sp_op_info bad = ok;
    bad.inputs = NULL;
    CHECK_EQ(SP_EINVAL, sp_profiler_add_op_info(p, &bad, 1));
    bad = ok;
    bad.op_type = NULL;
    CHECK_EQ(SP_EINVAL, sp_profiler_add_op_info(p, &bad, 1));
    bad = ok;
    bad.callstack = NULL;
    CHECK_EQ(SP_EINVAL, sp_profiler_add_op_info(p, &bad, 1));
    int64_t full[SP_OP_RANK_MAX];
    for (size_t i = 0; i < SP_OP_RANK_MAX; i++)
        full[i] = -1; /* unknown dims are kept */
    sp_op_input max_rank = {"X", 1, full, SP_OP_RANK_MAX, "", 0};
    sp_op_info edge = {
        .tid = (uint64_t)gettid(), .time_ns = realtime_ns(), .inputs = &max_rank, .input_count = 1};
    CHECK_OK(sp_profiler_add_op_info(p, &edge, 1));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    const sp__thread *t = r ? thread_of(r, (uint64_t)gettid()) : NULL;
    CHECK(t && t->op_count == 1); /* only the edge op */
    if (t && t->op_count == 1) {
        const uint64_t *w = t->op_words + t->ops[0].words;
        CHECK_U64_EQ(SP_OP_RANK_MAX, w[3]);
        CHECK_EQ(-1, (int64_t)w[4]);
        CHECK_STR_EQ("", sp__result_name(r, t->ops[0].op_type));
        /* no op around it: its step's range, or the thread's root */
        int32_t h = t->ops[0].host;
        CHECK(h < 0 || t->events[h].type == SP_EVENT_PROFILE_STEP);
    }
    CHECK_EQ(SP_ESTATE, sp_profiler_add_op_info(p, &ok, 1)); /* stopped */
    sp_profiler_destroy(p);
}

static void test_op_info_odd_names_and_times_are_counted(void)
{
    static char long_name[5000];
    memset(long_name, 'a', sizeof long_name);
    static const int64_t d[] = {3};
    sp_op_input in[] = {{"\xff\xfeX", 3, d, 1, "flo\0at", 6}};
    sp_op_info ops[4];
    for (size_t i = 0; i < 4; i++)
        ops[i] = matmul();
    ops[0].op_type = long_name;
    ops[0].op_type_len = sizeof long_name;
    ops[1].inputs = in;
    ops[1].input_count = 1;
    ops[2].time_ns = 1; /* 1970: long before the span */
    ops[3].time_ns = INT64_MAX;
    int64_t a;
    sp_profiler *p = span_with(ops, 4, &a);
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    if (!r) return;
    CHECK_U64_EQ(2, sp_result_counter(r, SP_COUNTER_OUT_OF_WINDOW));
    CHECK(sp_result_counter(r, SP_COUNTER_NAMES_CUT) >= 2);    /* the long name, the NUL */
    CHECK(sp_result_counter(r, SP_COUNTER_INVALID_UTF8) >= 1); /* the key */
    const sp__thread *t = thread_of(r, (uint64_t)gettid());
    CHECK(t && t->op_count == 2);
    if (t && t->op_count == 2) {
        CHECK_U64_EQ(4096, strlen(sp__result_name(r, t->ops[0].op_type)));
        CHECK_STR_EQ("\xef\xbf\xbd\xef\xbf\xbdX",
                     sp__result_name(r, (uint32_t)t->op_words[t->ops[1].words + 1]));
        char *text = operator_summary(r), cell[64];
        flops_cell(text, "matmul dygraph", cell, sizeof cell);
        CHECK_STR_EQ("16384", cell); /* both ops in the window are in the one range */
        free(text);
    }
    sp_profiler_destroy(p);
}

/* Ops belong to the span they were added to: the next span starts empty. */
static void test_op_info_stays_with_its_span(void)
{
    sp_profiler *p = make();
    CHECK_OK(sp_profiler_start(p));
    sp_op_info op = matmul();
    op.time_ns = realtime_ns();
    CHECK_OK(sp_profiler_add_op_info(p, &op, 1));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    const sp__thread *t = r ? thread_of(r, (uint64_t)gettid()) : NULL;
    CHECK(t && t->op_count == 1);
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin(SP_EVENT_USER_DEFINED, "work");
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    r = sp_profiler_result(p);
    t = r ? thread_of(r, (uint64_t)gettid()) : NULL;
    CHECK(!t || t->op_count == 0);
    sp_profiler_destroy(p);
}

/* FLOPs sum as paddle's statistic sums them: an Operator's row counts the
 * operators nested in it too; an op whose time falls in a non-Operator
 * child (one that starts with the op) still counts for the op. */
static void test_op_info_flops_sum_over_nested_operators(void)
{
    sp_profiler *p = make();
    CHECK_OK(sp_profiler_start(p));
    int64_t a = realtime_ns();
    usleep(2000);
    int64_t b = realtime_ns();
    uint64_t me = (uint64_t)gettid();
    sp_external_event ev[] = {
        {me, SP_EVENT_OPERATOR, "linear dygraph", 14, a, b},
        {me, SP_EVENT_OPERATOR_INNER, "linear prepare", 14, a, a + 100000},
        {me, SP_EVENT_OPERATOR, "matmul dygraph", 14, a + 200000, a + 400000},
        {me, SP_EVENT_OPERATOR, "add dygraph", 11, a + 500000, a + 600000},
    };
    CHECK_OK(sp_profiler_add_events(p, ev, 4));
    sp_op_info ops[] = {matmul(), matmul(), matmul()};
    ops[0].time_ns = a; /* inside "linear prepare", which starts with the op */
    ops[0].flops = 5;
    ops[1].time_ns = a + 200000;
    ops[1].flops = 100;
    ops[2].time_ns = a + 500000;
    ops[2].flops = 20;
    CHECK_OK(sp_profiler_add_op_info(p, ops, 3));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    if (r) {
        char *text = operator_summary(r), cell[64];
        flops_cell(text, "linear dygraph", cell, sizeof cell);
        CHECK_STR_EQ("125", cell);
        flops_cell(text, "matmul dygraph", cell, sizeof cell);
        CHECK_STR_EQ("100", cell);
        flops_cell(text, "add dygraph", cell, sizeof cell);
        CHECK_STR_EQ("20", cell);
        free(text);
    }
    sp_profiler_destroy(p);
}

/* The thread index of tid in r, or SIZE_MAX. */
static size_t thread_index(const sp_result *r, uint64_t tid)
{
    sp_thread_info ti;
    for (size_t i = 0; sp_result_thread(r, i, &ti) == SP_OK; i++)
        if (ti.tid == tid) return i;
    return SIZE_MAX;
}

/* Checks that r holds the concat op of test_op_info_reads_back, through
 * the public accessors only. */
static void check_concat(const sp_result *r)
{
    size_t t = thread_index(r, (uint64_t)gettid());
    CHECK(t != SIZE_MAX);
    CHECK_U64_EQ(1, sp_result_op_count(r, t));
    sp_op_record op;
    CHECK_OK(sp_result_op(r, t, 0, &op));
    CHECK_STR_EQ("concat", op.op_type);
    CHECK_STR_EQ("a.py(1)", op.callstack);
    CHECK_U64_EQ(96, op.flops);
    CHECK_U64_EQ(3, op.input_count);
    sp_event_info e;
    CHECK(op.event >= 0);
    CHECK_OK(sp_result_event(r, t, (size_t)op.event, &e));
    CHECK_STR_EQ("matmul dygraph", e.name);
    CHECK(op.time_ns >= e.start_ns && op.time_ns < e.end_ns);
    sp_op_input in[3];
    for (size_t j = 0; j < 3; j++) CHECK_OK(sp_result_op_input(r, t, 0, j, &in[j]));
    CHECK_STR_EQ("X", in[0].key);
    CHECK_U64_EQ(1, in[0].key_len);
    CHECK_U64_EQ(2, in[0].rank);
    CHECK(in[0].dims && in[0].dims[0] == 4 && in[0].dims[1] == -2);
    CHECK_STR_EQ("float32", in[0].dtype);
    CHECK_U64_EQ(7, in[0].dtype_len);
    CHECK_STR_EQ("X", in[1].key);
    CHECK_U64_EQ(1, in[1].rank);
    CHECK(in[1].dims && in[1].dims[0] == 4);
    CHECK_STR_EQ("float16", in[1].dtype);
    CHECK_STR_EQ("axis", in[2].key);
    CHECK_U64_EQ(0, in[2].rank);
    CHECK(in[2].dims == NULL);
    CHECK_STR_EQ("int64", in[2].dtype);
    /* Out of range: refused, nothing read. */
    CHECK_EQ(SP_EINVAL, sp_result_op_input(r, t, 0, 3, &in[0]));
    CHECK_EQ(SP_EINVAL, sp_result_op_input(r, t, 1, 0, &in[0]));
    CHECK_EQ(SP_EINVAL, sp_result_op_input(r, t, 0, 0, NULL));
    CHECK_EQ(SP_EINVAL, sp_result_op(r, t, 1, &op));
    CHECK_EQ(SP_EINVAL, sp_result_op(r, sp_result_thread_count(r), 0, &op));
    CHECK_EQ(SP_EINVAL, sp_result_op(NULL, 0, 0, &op));
    CHECK_U64_EQ(0, sp_result_op_count(r, sp_result_thread_count(r)));
    CHECK_U64_EQ(0, sp_result_op_count(NULL, 0));
}

/* sp_result_op and sp_result_op_input give back what add_op_info took, on
 * the live result and on one loaded from its .pb. */
static void test_op_info_reads_back_through_the_result_api(void)
{
    static const int64_t d[] = {4, -2};
    sp_op_input in[] = {{"X", 1, d, 2, "float32", 7},
                        {"X", 1, d, 1, "float16", 7},
                        {"axis", 4, NULL, 0, "int64", 5}};
    sp_op_info op = {.tid = (uint64_t)gettid(),
                     .op_type = "concat",
                     .op_type_len = 6,
                     .inputs = in,
                     .input_count = 3,
                     .callstack = "a.py(1)",
                     .callstack_len = 7,
                     .flops = 96};
    sp_profiler *p = span_with(&op, 1, NULL);
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    if (!r) goto done;
    check_concat(r);
    char dir[] = "/tmp/sp_op_read_XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/trace.pb", dir);
    CHECK_OK(sp_result_export_protobuf(r, path));
    sp_result *back = NULL;
    CHECK_OK(sp_result_load(path, NULL, &back));
    if (back) check_concat(back);
    sp_result_release(back);
    unlink(path);
    rmdir(dir);
done:
    sp_profiler_destroy(p);
}

int main(void)
{
    RUN_TEST(test_op_info_joins_the_op_range);
    RUN_TEST(test_op_info_same_key_inputs_are_one_list);
    RUN_TEST(test_op_info_bad_arguments_add_nothing);
    RUN_TEST(test_op_info_odd_names_and_times_are_counted);
    RUN_TEST(test_op_info_stays_with_its_span);
    RUN_TEST(test_op_info_flops_sum_over_nested_operators);
    RUN_TEST(test_op_info_reads_back_through_the_result_api);
    return TEST_SUMMARY();
}
