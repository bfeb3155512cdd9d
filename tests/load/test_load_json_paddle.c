/* test_load_json_paddle.c: paddle's own chrome trace (trace-format.md §10.3,
 * load_json.c, json_paddle.c) against a file paddle 3.3.1 wrote itself
 * (tests/data/paddle_mlp.paddle_trace.json, made by make_paddle_json.py
 * with the tables paddle printed for the same run beside it): thread ids,
 * event types, nesting, memory events, and stepprof's summary of the file
 * equal to paddle's own, row for row; the export keeps paddle's types; odd
 * and hostile input in paddle's dialect gives a defined result. */
#include "check.h"
#include "collect.h"
#include "fixture.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXTURE SP_SOURCE_DIR "/tests/data/paddle_mlp.paddle_trace.json"
#define PADDLE_TABLES SP_SOURCE_DIR "/tests/data/paddle_mlp.paddle_summary.txt"

static char dir[] = "/tmp/sp_load_json_paddle_XXXXXX";
static char path[300];

static char *read_all(const char *file)
{
    FILE *f = fopen(file, "rb");
    CHECK(f != NULL);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    size_t got = text ? fread(text, 1, (size_t)n, f) : 0;
    fclose(f);
    if (text) text[got] = '\0';
    return text;
}

static void write_text(const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static char *summary_text(const sp_result *r, const char *unit)
{
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.time_unit = unit;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    CHECK_OK(sp_result_summary(r, &o, mem));
    fclose(mem);
    return text;
}

static size_t count_type(const sp_result *r, sp_event_type type)
{
    size_t n = 0;
    for (size_t t = 0; t < r->thread_count; t++)
        for (size_t i = 0; i < r->threads[t].count; i++)
            n += r->threads[t].events[i].type == type;
    return n;
}

static const char *name_of(const sp_result *r, const sp__event *e)
{
    return sp__names_get(&r->names, e->name);
}

static void test_paddle_json_threads_and_types(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(FIXTURE, NULL, &r));
    if (!r) return;
    /* "1779(Python)" and "1779(C++)" are one thread, named by ExtraInfo. */
    CHECK_EQ((size_t)1, sp_result_thread_count(r));
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    CHECK_U64_EQ(1779, ti.tid);
    CHECK_STR_EQ("MainThread", ti.name);
    CHECK_EQ((size_t)208, ti.event_count);
    static const struct {
        sp_event_type type;
        size_t count;
    } want[] = {
        {SP_EVENT_PROFILE_STEP, 2},
        {SP_EVENT_DATALOADER, 2},
        {SP_EVENT_FORWARD, 8},
        {SP_EVENT_BACKWARD, 2},
        {SP_EVENT_OPTIMIZATION, 2},
        {SP_EVENT_PYTHON_USER_DEFINED, 2},
        {SP_EVENT_OPERATOR, 50},
        {SP_EVENT_OPERATOR_INNER, 76},
        {SP_EVENT_DYGRAPH_KERNEL_LAUNCH, 44},
        {SP_EVENT_USER_DEFINED, 20},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_EQ(want[i].count, count_type(r, want[i].type));
    /* 32 Allocate and 36 Free events, with their args. */
    const sp__thread *t = &r->threads[0];
    CHECK_EQ((size_t)68, t->mem_count);
    size_t allocs = 0;
    for (size_t k = 0; k < t->mem_count; k++) {
        const sp__mem_event *m = &t->mems[k];
        allocs += m->type == SP_MEM_ALLOCATE;
        CHECK_STR_EQ("Place(cpu)", sp__names_get(&r->names, m->place));
        CHECK(m->addr != 0);
        CHECK((m->type == SP_MEM_ALLOCATE) == (m->bytes > 0));
        CHECK(m->peak_allocated >= m->current_allocated);
        CHECK(m->host >= 0); /* every one lies in a range */
    }
    CHECK_EQ((size_t)32, allocs);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_LOAD_SKIPPED));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_OVERLAP));
    sp_result_release(r);
}

/* The nesting is paddle's: steps at the top, each Operator under a step,
 * each kernel launch under an operator or its inner range, the backward
 * nodes' Local_ range under their Global_ one. Built from ts and dur alone
 * (whole microseconds) some of these broke. */
static void test_paddle_json_nesting(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(FIXTURE, NULL, &r));
    if (!r) return;
    const sp__thread *t = &r->threads[0];
    size_t launches = 0, locals = 0;
    for (size_t i = 0; i < t->count; i++) {
        const sp__event *e = &t->events[i];
        const sp__event *p = e->parent >= 0 ? &t->events[e->parent] : NULL;
        if (e->type == SP_EVENT_PROFILE_STEP) {
            CHECK(p == NULL);
            CHECK(strncmp(name_of(r, e), "ProfileStep#", 12) == 0);
        } else {
            CHECK(p != NULL); /* everything lies in a step */
        }
        if (e->type == SP_EVENT_OPERATOR) {
            const sp__event *a = e;
            while (a->parent >= 0)
                a = &t->events[a->parent];
            CHECK_EQ((int)SP_EVENT_PROFILE_STEP, (int)a->type);
        }
        if (e->type == SP_EVENT_DYGRAPH_KERNEL_LAUNCH && p) {
            launches++;
            /* backward() fills the loss's gradient with a bare kernel
             * launch, no operator around it */
            if (p->type == SP_EVENT_USER_DEFINED)
                CHECK(strcmp(name_of(r, p), "backward") == 0 &&
                      strncmp(name_of(r, e), "full ", 5) == 0);
            else
                CHECK(p->type == SP_EVENT_OPERATOR || p->type == SP_EVENT_OPERATOR_INNER);
        }
        if (strncmp(name_of(r, e), "Local_", 6) == 0 && p) {
            locals++;
            CHECK_EQ((int)SP_EVENT_OPERATOR_INNER, (int)e->type);
            CHECK(strncmp(name_of(r, p), "Global_", 7) == 0 &&
                  strcmp(name_of(r, p) + 7, name_of(r, e) + 6) == 0);
        }
        if (e->type == SP_EVENT_PYTHON_USER_DEFINED) {
            CHECK_STR_EQ("scale_input", name_of(r, e));
            CHECK_EQ(1u, e->depth);
        }
        if (e->type == SP_EVENT_DATALOADER) CHECK_EQ(1u, e->depth);
    }
    CHECK_EQ((size_t)44, launches);
    CHECK(locals > 0);
    /* Exact times from start_time/end_time: the first step is 6.077 ms as
     * paddle's name says, to the nanosecond its args give. */
    CHECK(t->events[0].type == SP_EVENT_PROFILE_STEP);
    CHECK(t->events[0].end_ns - t->events[0].start_ns == 6076905);
    sp_result_release(r);
}

/* Cuts the section whose header line holds title, up to the next header. */
static void strip_section(char *text, const char *title)
{
    char *h = text ? strstr(text, title) : NULL;
    if (!h) return;
    while (h > text && h[-1] != '\n')
        h--;
    char *next = strchr(h, '\n');
    while (next &&
           !(strstr(next + 1, "Summary") && strchr(next + 1, '\n') > strstr(next + 1, "Summary")))
        next = strchr(next + 1, '\n');
    if (!next) {
        *h = '\0';
        return;
    }
    memmove(h, next + 1, strlen(next + 1) + 1);
}

static void trim_newlines(char *text)
{
    size_t n = text ? strlen(text) : 0;
    while (n > 0 && text[n - 1] == '\n')
        text[--n] = '\0';
}

/* stepprof's tables of paddle's file are the tables paddle printed for that
 * run, byte for byte (Overview, Model, Operator with its rows and calls,
 * Memory and Memory Manipulation). Only the UserDefined table differs:
 * paddle's lists its Python RecordEvents alone, stepprof's every
 * user-defined range. */
static void test_paddle_json_summary_equals_paddles(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(FIXTURE, NULL, &r));
    if (!r) return;
    char *ours = summary_text(r, "us");
    char *theirs = read_all(PADDLE_TABLES);
    CHECK(ours && theirs && strstr(theirs, "matmul dygraph") && strstr(theirs, "Allocation Count"));
    strip_section(ours, "UserDefined Summary");
    strip_section(theirs, "UserDefined Summary");
    trim_newlines(ours); /* paddle's print() adds one */
    trim_newlines(theirs);
    CHECK_STR_EQ(theirs ? theirs : "", ours ? ours : "");
    free(ours);
    free(theirs);
    sp_result_release(r);
}

static void test_paddle_json_golden(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(FIXTURE, NULL, &r));
    if (!r) return;
    char *text = summary_text(r, "ms");
    fixture_check_golden("paddle_json_mlp.txt", text ? text : "");
    free(text);
    sp_result_release(r);
}

/* Written back in stepprof's (Kineto) dialect, paddle's types stay in args
 * "Event Type" and the memory events stay; JSON and protobuf both load back
 * to the same tables. */
static void test_paddle_json_export_keeps_types(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(FIXTURE, NULL, &r));
    if (!r) return;
    char *before = summary_text(r, "us");
    static const char *const exts[] = {"json", "pb"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/out.%s", dir, exts[i]);
        CHECK_OK(i == 0 ? sp_result_export(r, path, SP_FORMAT_JSON)
                        : sp_result_export_protobuf(r, path));
        if (i == 0) {
            char *json = read_all(path);
            CHECK(json && strstr(json, "\"Event Type\":\"DygraphKernelLaunch\""));
            CHECK(json && strstr(json, "\"Event Type\":\"PythonUserDefined\""));
            CHECK(json && strstr(json, "\"Event Type\":\"OperatorInner\""));
            CHECK(json && strstr(json, "\"name\":\"[memory]\""));
            CHECK(json && !strstr(json, "(Python)")); /* integer tids */
            free(json);
        }
        sp_result *back = NULL;
        CHECK_OK(sp_result_load(path, NULL, &back));
        if (!back) continue;
        char *after = summary_text(back, "us");
        CHECK_STR_EQ(before ? before : "", after ? after : "");
        free(after);
        sp_result_release(back);
        unlink(path);
    }
    free(before);
    sp_result_release(r);
}

#define EV(cat, tid, ts, dur, args)                                                                \
    "{\"name\":\"op[1.000 us]\",\"pid\":7,\"tid\":" tid ",\"ts\":" ts ",\"dur\":" dur              \
    ",\"ph\":\"X\",\"cat\":\"" cat "\",\"args\":{" args "}},\n"

/* Odd input in paddle's dialect: each gives a defined result, counted where
 * something is skipped. */
static void test_paddle_json_odd_input(void)
{
    snprintf(path, sizeof path, "%s/odd.json", dir);
    write_text(
        "{\"schemaVersion\":\"1.0.2\",\"span_index\":\"4\",\"traceEvents\":[\n" EV(
            "ProfileStep", "\"9(Python)\"", "1000", "100.000",
            "\"start_time\":\"0.000 us\",\"end_time\":\"100.000 us\"")
        /* a tid string without a number, and one with words after it */
        EV("Operator", "\"(Python)\"", "1010", "1.000", "")
            EV("Operator", "\"x9(C++)\"", "1010", "1.000", "")
        /* an unknown cat in a paddle file */
        EV("MluRuntime", "\"9(C++)\"", "1010", "1.000", "")
        /* start_time that disagrees with ts: ts and dur are kept */
        EV("Operator", "\"9(C++)\"", "1020", "5.000",
           "\"start_time\":\"500.000 us\",\"end_time\":\"505.000 us\"")
        /* start_time that is not a time */
        EV("Operator", "\"9(C++)\"", "1030", "5.000", "\"start_time\":\"soon\",\"end_time\":[1]")
        /* a [memory] event of an unknown kind, and one with odd args */
        "{\"name\":\"[memory]\",\"pid\":7,\"tid\":\"9(C++)\",\"ts\":1021,\"ph\":\"i\",\"cat\":"
        "\"Leak\",\"args\":{}},\n"
        "{\"name\":\"[memory]\",\"pid\":7,\"tid\":\"9(C++)\",\"ts\":1021,\"ph\":\"i\",\"cat\":"
        "\"Allocate\","
        "\"args\":{\"place\":7,\"addr\":\"zz\",\"increase_bytes\":\"8\",\"current_allocated\":-1}},"
        "\n"
        /* a CUDA call without args, a kernel on a stream given as a string */
        EV("CudaRuntime", "\"9(C++)\"", "1040", "1.000", "")
            EV("Kernel", "\"3\"", "1041", "1.000", "\"correlation id\":99") "{}]}");
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    CHECK_EQ(4u, sp_result_span_index(r));
    /* two bad tids, an unknown cat, an unknown memory kind */
    CHECK_U64_EQ(4, sp_result_counter(r, SP_COUNTER_LOAD_SKIPPED));
    CHECK_EQ((size_t)1, sp_result_thread_count(r));
    const sp__thread *t = &r->threads[0];
    CHECK_U64_EQ(9, t->tid);
    CHECK_EQ((size_t)3, t->count);
    CHECK_EQ((size_t)1, t->mem_count);
    CHECK_EQ((size_t)1, t->runtime_count);
    CHECK_EQ((size_t)1, r->device_count);
    for (size_t i = 0; i < t->count; i++) {
        const sp__event *e = &t->events[i];
        if (e->type == SP_EVENT_OPERATOR && e->start_ns == 1020000) CHECK(e->end_ns == 1025000);
        if (e->type == SP_EVENT_OPERATOR) CHECK_EQ(1u, e->depth);
    }
    if (r->device_count == 1) {
        CHECK_EQ(3u, r->devices[0].stream);
        CHECK_EQ(7u, r->devices[0].device);
        CHECK_EQ(-1, r->devices[0].thread); /* correlation 99 launched by no call here */
    }
    char *text = summary_text(r, "us");
    CHECK(text != NULL);
    free(text);
    sp_result_release(r);
    unlink(path);
}

/* Past the first 16.7 ms of a trace, paddle's start_time/end_time are
 * float-rounded and dur is exact: lengths come from dur, as far as the
 * nesting the args give allows. */
static void test_paddle_json_exact_lengths(void)
{
    snprintf(path, sizeof path, "%s/lengths.json", dir);
    write_text("{\"span_index\":\"0\",\"traceEvents\":[\n"
               EV("ProfileStep", "\"2(Python)\"", "1000000", "30000.000",
                  "\"start_time\":\"0.000 us\",\"end_time\":\"30000.002 us\"")
               /* a: its dur would end it 3 ns into b, its next sibling */
               EV("Operator", "\"2(C++)\"", "1020000", "10.001",
                  "\"start_time\":\"20000.002 us\",\"end_time\":\"20010.000 us\"")
               EV("OperatorInner", "\"2(C++)\"", "1020000", "10.000",
                  "\"start_time\":\"20000.002 us\",\"end_time\":\"20010.000 us\"")
               EV("Operator", "\"2(C++)\"", "1020010", "5.000",
                  "\"start_time\":\"20010.000 us\",\"end_time\":\"20015.000 us\"")
               /* c: alone, so its dur stands */
               EV("Operator", "\"2(C++)\"", "1025000", "7.000",
                  "\"start_time\":\"25000.001 us\",\"end_time\":\"25007.003 us\"")
               "{}]}");
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    const sp__thread *t = &r->threads[0];
    CHECK_EQ((size_t)5, t->count);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_OVERLAP));
    if (t->count == 5) {
        const sp__event *step = &t->events[0], *a = &t->events[1], *inner = &t->events[2];
        const sp__event *b = &t->events[3], *c = &t->events[4];
        CHECK(step->end_ns - step->start_ns == 30000000);
        CHECK(c->end_ns - c->start_ns == 7000);
        CHECK(b->end_ns - b->start_ns == 5000);
        CHECK(a->end_ns == b->start_ns); /* cut at its sibling */
        CHECK(inner->end_ns == a->end_ns); /* and its child with it */
        CHECK_EQ(1u, a->depth);
        CHECK_EQ(2u, inner->depth);
        CHECK_EQ(1u, b->depth);
        CHECK_EQ(1u, c->depth);
        for (size_t i = 0; i < t->count; i++) CHECK(t->events[i].value == 0);
    }
    sp_result_release(r);
    unlink(path);
}

/* A small paddle file cut at every byte: loads, or fails with a message;
 * never crashes (run under ASan). */
static void test_paddle_json_cut_anywhere(void)
{
    static const char whole[] =
        "{\n  \"schemaVersion\": \"1.0.2\", \"span_index\": \"0\",\n  \"traceEvents\": [\n"
        "  { \"name\": \"ProfileStep#1[0.100 ms]\", \"pid\": 5, \"tid\": \"5(Python)\", \"ts\": "
        "1000, \"dur\": 100.000,"
        " \"ph\": \"X\", \"cat\": \"ProfileStep\", \"args\": { \"start_time\": \"0.000 us\", "
        "\"end_time\": \"100.000 us\" } },\n"
        "  { \"name\": \"[memory]\", \"pid\": 5, \"tid\": \"5(C++)\", \"ts\": 1001, \"ph\": \"i\", "
        "\"cat\": \"Allocate\","
        " \"args\": { \"place\": \"Place(cpu)\", \"addr\": \"4096\", \"increase_bytes\": 64, "
        "\"current_allocated\": 64,"
        " \"current_reserved\": 0, \"peak_allocated\": 64, \"peak_reserved\": 0 } },\n"
        "  { \"name\": \"relu dygraph[2.000 us]\", \"pid\": 5, \"tid\": \"5(C++)\", \"ts\": 1010, "
        "\"dur\": 2.000,"
        " \"ph\": \"X\", \"cat\": \"Operator\", \"args\": { \"start_time\": \"10.500 us\", "
        "\"end_time\": \"12.500 us\" } },\n"
        "  {}\n  ],\n  \"ExtraInfo\": { \"5\": \"MainThread\" }\n}\n";
    snprintf(path, sizeof path, "%s/cut.json", dir);
    size_t n = strlen(whole), loaded = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (!f) return;
        fwrite(whole, 1, cut, f);
        fclose(f);
        sp_result *r = NULL;
        sp_status s = sp_result_load(path, NULL, &r);
        if (s == SP_OK) {
            loaded++;
            sp_result_release(r);
        } else {
            CHECK(sp_last_error() != NULL && sp_last_error()[0] != '\0');
        }
    }
    CHECK(loaded >= 1); /* the whole file at least */
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (r) {
        CHECK_EQ((size_t)2, r->threads[0].count);
        CHECK_EQ((size_t)1, r->threads[0].mem_count);
        CHECK_EQ(1u, r->threads[0].events[1].depth);
        /* the memory event's microsecond overlaps the step it follows */
        CHECK_EQ(0, r->threads[0].mems[0].host);
        sp_result_release(r);
    }
    unlink(path);
}

/* Many events: streamed, so they load in one pass; each gets its own exact
 * time from start_time. */
static void test_paddle_json_many_events(void)
{
    snprintf(path, sizeof path, "%s/many.json", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    enum { N = 200000 };
    fputs("{\"schemaVersion\":\"1.0.2\",\"span_index\":\"0\",\"traceEvents\":[\n", f);
    fprintf(f,
            EV("ProfileStep", "\"1(Python)\"", "%d", "%d.000",
               "\"start_time\":\"0.000 us\",\"end_time\":\"%d.000 us\""),
            1000000, N, N);
    for (int i = 0; i < N; i++)
        fprintf(f,
                EV("Operator", "\"1(C++)\"", "%d", "0.500",
                   "\"start_time\":\"%d.250 us\",\"end_time\":\"%d.750 us\""),
                1000000 + i, i, i);
    fputs("{}]}\n", f);
    fclose(f);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (r) {
        CHECK_EQ((size_t)N + 1, r->threads[0].count);
        CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_OVERLAP));
        const sp__event *last = &r->threads[0].events[N];
        CHECK(last->end_ns - last->start_ns == 500);
        CHECK(last->start_ns - r->threads[0].events[0].start_ns == (int64_t)(N - 1) * 1000 + 250);
        sp_result_release(r);
    }
    unlink(path);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_paddle_json_threads_and_types);
    RUN_TEST(test_paddle_json_nesting);
    RUN_TEST(test_paddle_json_summary_equals_paddles);
    RUN_TEST(test_paddle_json_golden);
    RUN_TEST(test_paddle_json_export_keeps_types);
    RUN_TEST(test_paddle_json_odd_input);
    RUN_TEST(test_paddle_json_exact_lengths);
    RUN_TEST(test_paddle_json_cut_anywhere);
    RUN_TEST(test_paddle_json_many_events);
    rmdir(dir);
    return TEST_SUMMARY();
}
