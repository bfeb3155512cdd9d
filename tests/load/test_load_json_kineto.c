/* test_load_json_kineto.c: a trace in torch.profiler's own words (Kineto:
 * no "Event Type" args) loads with its steps, data loading, optimizer steps
 * and collectives typed by their names (json_kineto.c), so that summary,
 * diagnose and report find steps in it; names that only look alike, in
 * other cats, and stepprof's own "Event Type" keep their types. */
#include "check.h"

#include <stepprof/stepprof.h>

#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char trace[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 7, \"tid\": 7, \"ts\": 1000.0, \"dur\": 100.0},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\", \"pid\": 7, \"tid\": 7, \"ts\": 1001.0, \"dur\": 10.0},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 7, \"tid\": 7, \"ts\": 1012.0, \"dur\": 20.0},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"gloo:all_reduce\", \"pid\": 7, \"tid\": 7, \"ts\": 1040.0, \"dur\": 20.0},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 7, \"tid\": 7, \"ts\": 1041.0, \"dur\": 18.0},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"Optimizer.step#SGD.step\", \"pid\": 7, \"tid\": 7, \"ts\": 1070.0, \"dur\": 20.0},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#3\", \"pid\": 7, \"tid\": 7, \"ts\": 1071.0, \"dur\": 1.0},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#x\", \"pid\": 7, \"tid\": 7, \"ts\": 1073.0, \"dur\": 1.0},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"gloo:all_reduce\", \"pid\": 7, \"tid\": 7, \"ts\": 1075.0, \"dur\": 1.0, \"args\": {\"Event Type\": \"UserDefined\"}}\n"
    "]}\n";

/* Loads text (len bytes) through a temporary file; NULL (the check
 * failed) when it cannot. */
static sp_result *load_text(const char *text, size_t len)
{
    char path[] = "/tmp/sp_kineto_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return NULL;
    CHECK_EQ((long)len, (long)write(fd, text, len));
    close(fd);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    unlink(path);
    return r;
}

static void test_kineto_names_give_types(void)
{
    sp_result *r = load_text(trace, sizeof trace - 1);
    if (!r) return;
    CHECK_EQ(1, sp_result_thread_count(r));
    static const struct {
        const char *name;
        sp_event_type type;
    } want[] = {
        {"ProfileStep#2", SP_EVENT_PROFILE_STEP},
        {"_SingleProcessDataLoaderIter", SP_EVENT_DATALOADER},
        {"aten::addmm", SP_EVENT_OPERATOR},
        {"gloo:all_reduce", SP_EVENT_COMMUNICATION},
        {"record_param_comms", SP_EVENT_COMMUNICATION},
        {"Optimizer.step#SGD.step", SP_EVENT_OPTIMIZATION},
        {"ProfilerStep#3", SP_EVENT_OPERATOR},     /* a cpu_op is never a step */
        {"ProfilerStep#x", SP_EVENT_USER_DEFINED}, /* not digits */
        {"gloo:all_reduce", SP_EVENT_USER_DEFINED}, /* its Event Type wins */
    };
    sp_thread_info t;
    CHECK_OK(sp_result_thread(r, 0, &t));
    CHECK_EQ(sizeof want / sizeof *want, t.event_count);
    for (size_t i = 0; i < t.event_count && i < sizeof want / sizeof *want; i++) {
        sp_event_info e;
        CHECK_OK(sp_result_event(r, 0, i, &e));
        CHECK_STR_EQ(want[i].name, e.name);
        CHECK_EQ(want[i].type, e.type);
    }
    sp_result_release(r);
}

/* The loader keeps a range's type and name for the names it saw last
 * (json_take.c): the same name in another cat, or with another Event Type,
 * must still get its own type, and a name repeated gets the same. Written
 * as stepprof writes (no spaces), each triple twice, at separate times so
 * that the file's order is the result's. */
#define EV(cat, name, ts, args)                                                                \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":7,\"tid\":7,\"ts\":" ts   \
    ",\"dur\":1.000" args "},\n"
#define TYPE(t) ",\"args\":{\"Event Type\":\"" t "\"}"
#define LONG_NAME "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL"

static const char repeated[] =
    "{\"traceEvents\":[\n"
    EV("user_annotation", "ProfilerStep#5", "10.000", "")
    EV("cpu_op", "ProfilerStep#5", "20.000", "")
    EV("user_annotation", "ProfilerStep#5", "30.000", "")
    EV("user_annotation", "gloo:all_reduce", "40.000", "")
    EV("user_annotation", "gloo:all_reduce", "50.000", TYPE("UserDefined"))
    EV("user_annotation", "gloo:all_reduce", "60.000", TYPE("Forward"))
    EV("user_annotation", "gloo:all_reduce", "70.000", "")
    EV("python_function", "gloo:all_reduce", "80.000", "")
    EV("user_annotation", "enumerate(DataLoader)#It.__next__", "90.000", "")
    EV("user_annotation", "enumerate(DataLoader)#It.__next__", "100.000", "")
    EV("cpu_op", LONG_NAME, "110.000", "")
    EV("user_annotation", LONG_NAME, "120.000", "")
    EV("cpu_op", LONG_NAME, "130.000", TYPE("OperatorInner"))
    EV("cpu_op", LONG_NAME, "140.000", "")
    EV("cpu_op", "relu", "150.000", TYPE("Operator"))
    EV("cpu_op", "relu", "160.000", TYPE("OperatorInner"))
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"relu\",\"pid\":7,\"tid\":7,\"ts\":170.000,\"dur\":1.000}\n"
    "]}\n";

static void test_kineto_repeated_names_keep_their_types(void)
{
    sp_result *r = load_text(repeated, sizeof repeated - 1);
    if (!r) return;
    static const struct {
        const char *name;
        sp_event_type type;
    } want[] = {
        {"ProfileStep#5", SP_EVENT_PROFILE_STEP},
        {"ProfilerStep#5", SP_EVENT_OPERATOR},
        {"ProfileStep#5", SP_EVENT_PROFILE_STEP},
        {"gloo:all_reduce", SP_EVENT_COMMUNICATION},
        {"gloo:all_reduce", SP_EVENT_USER_DEFINED},
        {"gloo:all_reduce", SP_EVENT_FORWARD},
        {"gloo:all_reduce", SP_EVENT_COMMUNICATION},
        {"gloo:all_reduce", SP_EVENT_PYTHON_OP},
        {"It", SP_EVENT_DATALOADER},
        {"It", SP_EVENT_DATALOADER},
        {LONG_NAME, SP_EVENT_OPERATOR},
        {LONG_NAME, SP_EVENT_USER_DEFINED},
        {LONG_NAME, SP_EVENT_OPERATOR_INNER},
        {LONG_NAME, SP_EVENT_OPERATOR},
        {"relu", SP_EVENT_OPERATOR},
        {"relu", SP_EVENT_OPERATOR_INNER},
        {"relu", SP_EVENT_OPERATOR},
    };
    sp_thread_info t;
    CHECK_OK(sp_result_thread(r, 0, &t));
    CHECK_EQ(sizeof want / sizeof *want, t.event_count);
    for (size_t i = 0; i < t.event_count && i < sizeof want / sizeof *want; i++) {
        sp_event_info e;
        CHECK_OK(sp_result_event(r, 0, i, &e));
        CHECK_STR_EQ(want[i].name, e.name);
        CHECK_EQ(want[i].type, e.type);
    }
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_kineto_names_give_types);
    RUN_TEST(test_kineto_repeated_names_keep_their_types);
    return TEST_SUMMARY();
}
