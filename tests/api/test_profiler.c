/* test_profiler.c: the profiler's state machine (semantics.md §3): the
 * transition table's actions and warnings, when on_trace_ready fires, which
 * steps land in each span, misuse, and two profilers competing for the
 * tracers. Ranges are recorded on this thread only. */
#include "check.h"
#include "stepprof/stepprof.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct log_capture {
    char text[4096];
    int count;
} log_capture;

static void capture_log(sp_log_level level, const char *message, void *user)
{
    log_capture *c = user;
    (void)level;
    c->count++;
    strncat(c->text, message, sizeof c->text - strlen(c->text) - 2);
    strcat(c->text, "\n");
}

typedef struct ready_calls {
    int count;
    int64_t steps[16];  /* step number at each call */
    char spans[16][128]; /* ProfileStep names in each span, e.g. "2,3,4,5" */
} ready_calls;

static void describe_steps(const sp_result *r, char *out, size_t size)
{
    out[0] = '\0';
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
            if (e.type == SP_EVENT_PROFILE_STEP) {
                if (out[0]) strncat(out, ",", size - strlen(out) - 1);
                strncat(out, e.name + strlen("ProfileStep#"), size - strlen(out) - 1);
            }
}

static void on_ready(sp_profiler *prof, void *user)
{
    ready_calls *c = user;
    if (c->count < 16) {
        c->steps[c->count] = sp_profiler_step_num(prof);
        describe_steps(sp_profiler_result(prof), c->spans[c->count], sizeof c->spans[0]);
    }
    c->count++;
}

/* A custom schedule given as a string: C closed, W ready, R record,
 * A record-and-return; steps past its end are CLOSED. */
static sp_state from_string(int64_t step, void *user)
{
    const char *s = user;
    if (step >= (int64_t)strlen(s)) return SP_STATE_CLOSED;
    switch (s[step]) {
    case 'W': return SP_STATE_READY;
    case 'R': return SP_STATE_RECORD;
    case 'A': return SP_STATE_RECORD_AND_RETURN;
    default: return SP_STATE_CLOSED;
    }
}

typedef struct fixture {
    sp_options opts;
    sp_profiler *prof;
    ready_calls calls;
    log_capture log;
} fixture;

static void setup(fixture *f)
{
    memset(f, 0, sizeof *f);
    sp_options_init(&f->opts);
    f->opts.on_trace_ready = (sp_trace_handler){on_ready, &f->calls, NULL};
    f->opts.log = capture_log;
    f->opts.log_user = &f->log;
}

/* Runs start, `steps` calls of step (each marking one range), and stop. */
static void run(fixture *f, int steps)
{
    CHECK_OK(sp_profiler_create(&f->opts, &f->prof));
    CHECK_OK(sp_profiler_start(f->prof));
    for (int i = 0; i < steps; i++) {
        sp_range_begin(SP_EVENT_FORWARD, "forward");
        sp_range_end();
        sp_profiler_step(f->prof, 1);
    }
    sp_profiler_stop(f->prof);
}

static void test_profiler_make_scheduler_fires_once_per_period(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_make(&f.opts.scheduler, 1, 1, 4, 1, 0));
    run(&f, 10);
    CHECK_EQ(1, f.calls.count);
    CHECK_EQ(6, f.calls.steps[0]); /* inside the step() that leaves step 5 */
    CHECK_STR_EQ("2,3,4,5", f.calls.spans[0]);
    CHECK_EQ(0, f.log.count);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_skip_first_repeats_forever(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_make(&f.opts.scheduler, 1, 1, 4, 0, 1));
    run(&f, 19); /* ranges [3,6], [9,12], [15,18] */
    CHECK_EQ(3, f.calls.count);
    CHECK_STR_EQ("3,4,5,6", f.calls.spans[0]);
    CHECK_STR_EQ("9,10,11,12", f.calls.spans[1]);
    CHECK_STR_EQ("15,16,17,18", f.calls.spans[2]);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_range_form_records_exactly_once(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_range(&f.opts.scheduler, 10, 20));
    run(&f, 30);
    CHECK_EQ(1, f.calls.count);
    CHECK_STR_EQ("10,11,12,13,14,15,16,17,18,19", f.calls.spans[0]);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_default_returns_one_span_at_stop(void)
{
    fixture f;
    setup(&f);
    run(&f, 3);
    CHECK_EQ(1, f.calls.count);
    CHECK_EQ(3, f.calls.steps[0]);
    CHECK_STR_EQ("0,1,2,3", f.calls.spans[0]);
    const sp_result *r = sp_profiler_result(f.prof);
    CHECK(r != NULL);
    sp_event_info e;
    size_t forwards = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++)
        if (e.type == SP_EVENT_FORWARD) {
            forwards++;
            CHECK_EQ(1, e.depth); /* inside its ProfileStep */
        }
    CHECK_EQ(3, forwards);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_record_one_returns_every_step(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_make(&f.opts.scheduler, 0, 1, 1, 0, 0));
    run(&f, 6);
    /* W A W A W A (W): spans at steps 1, 3, 5 */
    CHECK_EQ(3, f.calls.count);
    CHECK_STR_EQ("1", f.calls.spans[0]);
    CHECK_STR_EQ("5", f.calls.spans[2]);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_back_to_back_spans_record_and_return(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_custom(&f.opts.scheduler, from_string, "AAA"));
    run(&f, 5);
    CHECK_EQ(3, f.calls.count);
    CHECK_STR_EQ("0", f.calls.spans[0]);
    CHECK_STR_EQ("1", f.calls.spans[1]);
    CHECK_STR_EQ("2", f.calls.spans[2]);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_improper_transitions_warn_and_discard(void)
{
    fixture f;
    setup(&f);
    /* W->C (W1), R->C (W2), R->W (W3), then W at stop */
    CHECK_OK(sp_scheduler_custom(&f.opts.scheduler, from_string, "WCRCRWRW"));
    run(&f, 7);
    CHECK_EQ(0, f.calls.count);
    CHECK(strstr(f.log.text, "Improper schedule: READY->CLOSED, profiler will start and stop without saving data"));
    CHECK(strstr(f.log.text, "Improper schedule: RECORD->CLOSED, profiler will not save data"));
    CHECK(strstr(f.log.text, "Improper schedule: RECORD->READY, profiler will stop and re-prepare"));
    CHECK(strstr(f.log.text, "Improper profiler state transition: READY->CLOSED"));
    CHECK(sp_profiler_result(f.prof) == NULL);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_stop_in_record_returns_result(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_custom(&f.opts.scheduler, from_string, "CWRRRRRR"));
    run(&f, 3); /* stop while RECORD at step 3 */
    CHECK_EQ(1, f.calls.count);
    CHECK_STR_EQ("2,3", f.calls.spans[0]);
    sp_profiler_destroy(f.prof);
}

static void test_profiler_ready_data_is_discarded(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_custom(&f.opts.scheduler, from_string, "WA"));
    CHECK_OK(sp_profiler_create(&f.opts, &f.prof));
    CHECK_OK(sp_profiler_start(f.prof));
    sp_range_begin(SP_EVENT_USER_DEFINED, "during ready");
    sp_range_end();
    CHECK_OK(sp_profiler_step(f.prof, -1));
    sp_range_begin(SP_EVENT_USER_DEFINED, "during record");
    sp_range_end();
    CHECK_OK(sp_profiler_step(f.prof, -1));
    CHECK_EQ(1, f.calls.count);
    const sp_result *r = sp_profiler_result(f.prof);
    sp_event_info e;
    int seen_ready = 0, seen_record = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        seen_ready += strcmp(e.name, "during ready") == 0;
        seen_record += strcmp(e.name, "during record") == 0;
    }
    CHECK_EQ(0, seen_ready);
    CHECK_EQ(1, seen_record);
    CHECK_OK(sp_profiler_stop(f.prof));
    sp_profiler_destroy(f.prof);
}

static void test_profiler_misuse_returns_estate(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_profiler_create(&f.opts, &f.prof));
    CHECK_EQ(SP_ESTATE, sp_profiler_step(f.prof, 1));
    CHECK_EQ(SP_ESTATE, sp_profiler_stop(f.prof));
    CHECK_OK(sp_profiler_start(f.prof));
    CHECK_EQ(SP_ESTATE, sp_profiler_start(f.prof));
    CHECK_OK(sp_profiler_stop(f.prof));
    CHECK_EQ(SP_ESTATE, sp_profiler_stop(f.prof));
    CHECK_EQ(SP_ESTATE, sp_profiler_step(f.prof, 1));
    CHECK(strstr(sp_last_error(), "after sp_profiler_stop") != NULL);
    CHECK_U64_EQ(5, sp_profiler_misuse_count(f.prof));
    CHECK_EQ(SP_EINVAL, sp_profiler_start(NULL));
    sp_profiler_destroy(f.prof);
    sp_profiler_destroy(NULL);
}

static void test_profiler_second_profiler_gets_ebusy_then_retries(void)
{
    fixture a, b;
    setup(&a);
    setup(&b);
    CHECK_OK(sp_profiler_create(&a.opts, &a.prof));
    CHECK_OK(sp_profiler_create(&b.opts, &b.prof));
    CHECK_OK(sp_profiler_start(a.prof));
    CHECK_EQ(SP_EBUSY, sp_profiler_start(b.prof));
    CHECK_EQ(SP_STATE_CLOSED, sp_profiler_state(b.prof));
    CHECK_OK(sp_profiler_step(b.prof, 1)); /* reported once only */
    CHECK_OK(sp_profiler_stop(a.prof));
    CHECK_EQ(1, a.calls.count);
    CHECK_OK(sp_profiler_step(b.prof, 1)); /* tracers free: b takes them */
    CHECK_EQ(SP_STATE_RECORD, sp_profiler_state(b.prof));
    CHECK_OK(sp_profiler_stop(b.prof));
    CHECK_EQ(1, b.calls.count);
    CHECK_STR_EQ("2", b.calls.spans[0]);
    sp_profiler_destroy(a.prof);
    sp_profiler_destroy(b.prof);
}

static void test_profiler_timer_only_records_nothing(void)
{
    fixture f;
    setup(&f);
    f.opts.timer_only = true;
    run(&f, 5);
    CHECK_EQ(0, f.calls.count);
    CHECK(sp_profiler_result(f.prof) == NULL);
    CHECK_EQ(0, sp_is_recording());
    CHECK_EQ(SP_ENODATA, sp_profiler_export(f.prof, "/tmp/never.json", SP_FORMAT_JSON));
    sp_profiler_destroy(f.prof);
}

static void test_profiler_create_warnings(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_scheduler_make(&f.opts.scheduler, 1, 0, 2, 0, 0));
    f.opts.targets = SP_TARGET_CPU | SP_TARGET_XPU;
    CHECK_OK(sp_profiler_create(&f.opts, &f.prof));
    CHECK(strstr(f.log.text, "may be 'noisy' because of overhead"));
    CHECK(strstr(f.log.text, "Profiling XPU is not supported in current context."));
    sp_profiler_destroy(f.prof);
    setup(&f);
    f.opts.scheduler.form = SP_SCHEDULER_CUSTOM; /* without a function */
    CHECK_EQ(SP_EINVAL, sp_profiler_create(&f.opts, &f.prof));
    CHECK_EQ(SP_EINVAL, sp_profiler_create(NULL, NULL));
}

/* Destroy without stop delivers the span as stop() would (issue 17): the
 * callback runs once with the range left open in it, and one line says so. */
static void test_profiler_destroy_while_recording_delivers_the_span(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_profiler_create(&f.opts, &f.prof));
    CHECK_OK(sp_profiler_start(f.prof));
    sp_range_begin(SP_EVENT_FORWARD, "left open");
    sp_profiler_destroy(f.prof);
    CHECK_EQ(1, f.calls.count);
    CHECK_STR_EQ("0", f.calls.spans[0]);
    CHECK_EQ(1, f.log.count);
    CHECK(strstr(f.log.text, "sp_profiler_destroy: the profiler was still recording") != NULL);
    CHECK(strstr(f.log.text, "passed to on_trace_ready") != NULL);
    CHECK_EQ(0, sp_is_recording());
    sp_range_end(); /* recording is off: a no-op */
}

/* What the re-entering callback below tried, and what it got. */
typedef struct reenter {
    sp_status start, step, stop;
    char message[3][256];
    int calls;
    int destroy;      /* the callback destroys the profiler */
    int released;     /* the handler's release ran */
    int log_lines;
    uint64_t misuse;  /* misuse count seen inside */
    sp_state state;   /* state seen after the refused calls */
    int64_t step_num;
} reenter;

static void reenter_ready(sp_profiler *prof, void *user)
{
    reenter *c = user;
    c->calls++;
    c->step_num = sp_profiler_step_num(prof);
    uint64_t misuse_before = sp_profiler_misuse_count(prof);
    c->start = sp_profiler_start(prof);
    snprintf(c->message[0], sizeof c->message[0], "%s", sp_last_error());
    c->step = sp_profiler_step(prof, 1);
    snprintf(c->message[1], sizeof c->message[1], "%s", sp_last_error());
    c->stop = sp_profiler_stop(prof);
    snprintf(c->message[2], sizeof c->message[2], "%s", sp_last_error());
    c->misuse = sp_profiler_misuse_count(prof) - misuse_before;
    c->state = sp_profiler_state(prof);
    CHECK(sp_profiler_result(prof) != NULL); /* reading calls still work */
    if (c->destroy) {
        sp_profiler_destroy(prof);
        sp_profiler_destroy(prof); /* twice: still deferred, still once */
        CHECK(sp_profiler_result(prof) != NULL); /* valid until the call returns */
    }
}

static void reenter_release(void *user) { ((reenter *)user)->released++; }

static void reenter_log(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    ((reenter *)user)->log_lines++;
}

static sp_profiler *reenter_profiler(reenter *c, const char *schedule)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = (sp_trace_handler){reenter_ready, c, reenter_release};
    o.log = reenter_log;
    o.log_user = c;
    if (schedule) CHECK_OK(sp_scheduler_custom(&o.scheduler, from_string, (void *)schedule));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    return p;
}

static void check_refused(const reenter *c)
{
    CHECK_EQ(SP_EBUSY, c->start);
    CHECK_EQ(SP_EBUSY, c->step);
    CHECK_EQ(SP_EBUSY, c->stop);
    CHECK_STR_EQ("sp_profiler_start: called from on_trace_ready; the profiler cannot be driven "
                 "from its own callback (call it after the callback returns)", c->message[0]);
    CHECK(strncmp(c->message[1], "sp_profiler_step: called from on_trace_ready;", 45) == 0);
    CHECK(strncmp(c->message[2], "sp_profiler_stop: called from on_trace_ready;", 45) == 0);
    CHECK_U64_EQ(3, c->misuse);
}

/* start, step and stop from inside on_trace_ready get SP_EBUSY and change
 * nothing; the profiler goes on as if they had not been made. */
static void test_profiler_calls_from_on_trace_ready_get_ebusy(void)
{
    reenter c = {0};
    sp_profiler *p = reenter_profiler(&c, "ARRR"); /* step 1 ends a span */
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_step(p, 1));
    CHECK_EQ(1, c.calls);
    check_refused(&c);
    CHECK_EQ(1, c.step_num);            /* the refused step did not count */
    CHECK_EQ(1, sp_profiler_step_num(p));
    CHECK_EQ(SP_STATE_RECORD, sp_profiler_state(p));
    CHECK_OK(sp_profiler_step(p, 1));
    CHECK_EQ(2, sp_profiler_step_num(p));
    CHECK_EQ(1, sp_is_recording());     /* the refused stop did not stop */
    CHECK_OK(sp_profiler_stop(p));      /* the callback runs again in stop */
    CHECK_EQ(2, c.calls);
    check_refused(&c);
    CHECK_EQ(0, sp_is_recording());
    CHECK_EQ(0, c.released);
    sp_profiler_destroy(p);
    CHECK_EQ(1, c.released);
}

/* destroy from inside on_trace_ready is deferred to the end of the call that
 * ran it, in step(), stop() and destroy(): no use after free (ASan build). */
static void test_profiler_destroy_from_on_trace_ready_is_deferred(void)
{
    reenter c = {.destroy = 1};
    sp_profiler *p = reenter_profiler(&c, "ARRR");
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin(SP_EVENT_FORWARD, "fwd");
    sp_range_end();
    CHECK_OK(sp_profiler_step(p, 1)); /* the callback destroys p; step returns normally */
    /* The destroy at the end of step stops the new span and delivers it:
     * the callback runs again (and asks for the destroy again). */
    CHECK_EQ(2, c.calls);
    CHECK_EQ(1, c.released);
    CHECK_EQ(1, c.log_lines);          /* "sp_profiler_destroy: ... still recording" */
    CHECK_EQ(0, sp_is_recording());
    check_refused(&c);

    reenter d = {.destroy = 1};
    p = reenter_profiler(&d, NULL);
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p));     /* destroyed at the end of stop */
    CHECK_EQ(1, d.calls);
    CHECK_EQ(1, d.released);
    CHECK_EQ(0, d.log_lines);
    check_refused(&d);

    reenter e = {.destroy = 1};
    p = reenter_profiler(&e, NULL);
    CHECK_OK(sp_profiler_start(p));
    sp_profiler_destroy(p);            /* delivers, the callback destroys again */
    CHECK_EQ(1, e.calls);
    CHECK_EQ(1, e.released);
    CHECK_EQ(0, sp_is_recording());
}

/* start after stop begins a new span; the step number keeps counting. */
static void test_profiler_start_after_stop_restarts(void)
{
    fixture f;
    setup(&f);
    run(&f, 2);
    CHECK_EQ(1, f.calls.count);
    CHECK_STR_EQ("0,1,2", f.calls.spans[0]);
    CHECK_OK(sp_profiler_start(f.prof));
    CHECK_EQ(1, sp_is_recording());
    CHECK_EQ(SP_STATE_RECORD, sp_profiler_state(f.prof));
    CHECK_EQ(SP_ESTATE, sp_profiler_start(f.prof));
    CHECK_STR_EQ("sp_profiler_start: the profiler was already started", sp_last_error());
    sp_range_begin(SP_EVENT_FORWARD, "again");
    sp_range_end();
    CHECK_OK(sp_profiler_step(f.prof, 1));
    CHECK_OK(sp_profiler_stop(f.prof));
    CHECK_EQ(2, f.calls.count);
    CHECK_STR_EQ("2,3", f.calls.spans[1]);
    CHECK_EQ(3, sp_profiler_step_num(f.prof));
    CHECK_U64_EQ(1, sp_profiler_misuse_count(f.prof));
    CHECK_EQ(0, f.log.count);
    sp_profiler_destroy(f.prof);
    CHECK_EQ(2, f.calls.count); /* stopped: destroy delivers nothing more */
}

static void test_profiler_user_range_open_across_step_keeps_steps_intact(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_profiler_create(&f.opts, &f.prof));
    CHECK_OK(sp_profiler_start(f.prof));
    sp_range_begin(SP_EVENT_USER_DEFINED, "epoch"); /* spans two steps */
    CHECK_OK(sp_profiler_step(f.prof, 1));
    CHECK_OK(sp_profiler_step(f.prof, 1));
    sp_range_end();
    CHECK_OK(sp_profiler_stop(f.prof));
    CHECK_STR_EQ("0,1,2", f.calls.spans[0]);
    const sp_result *r = sp_profiler_result(f.prof);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    /* epoch is cut at the end of step 0 and the start of step 2 (issue 17):
     * no partial overlap is left, and the pieces cover it exactly. */
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_OVERLAP));
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_SPLIT_RANGES));
    sp_event_info e, step[3];
    int pieces = 0, cont = 0;
    int64_t first = 0, last = 0, covered = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (e.type == SP_EVENT_PROFILE_STEP) step[e.name[strlen(e.name) - 1] - '0'] = e;
        if (strcmp(e.name, "epoch") != 0) continue;
        CHECK(e.flags & SP_EVENT_FLAG_SPLIT);
        cont += (e.flags & SP_EVENT_FLAG_SPLIT_CONT) != 0;
        if (pieces++ == 0) first = e.start_ns;
        last = e.end_ns;
        covered += e.end_ns - e.start_ns;
    }
    CHECK_EQ(3, pieces);
    CHECK_EQ(2, cont);
    CHECK_EQ(last - first, covered);
    /* the middle piece holds step 1 whole; the others lie in steps 0 and 2 */
    CHECK(first > step[0].start_ns && step[0].end_ns < step[1].start_ns);
    CHECK(last > step[2].start_ns && last < step[2].end_ns);

    /* The Overview counts epoch as one call, its time once. */
    sp_summary_table *table = NULL;
    CHECK_OK(sp_result_summary_table(r, SP_VIEW_OVERVIEW, NULL, &table));
    int rows = 0;
    for (size_t line = 0; line < sp_summary_table_lines(table); line++)
        if (sp_summary_table_line_kind(table, line) == SP_LINE_ROW &&
            strcmp(sp_summary_table_cell(table, line, 0), "  UserDefined") == 0) {
            rows++;
            CHECK_STR_EQ("1", sp_summary_table_cell(table, line, 1));
        }
    CHECK_EQ(1, rows);
    sp_summary_table_destroy(table);

    /* In the exported JSON every thread's X events nest. */
    char path[] = "/tmp/stepprof-nest-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_OK(sp_profiler_export(f.prof, path, SP_FORMAT_JSON));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -B %s/tests/trace/nestcheck.py %s >/dev/null", SP_PYTHON,
             SP_SOURCE_DIR, path);
    CHECK_EQ(0, system(cmd));
    unlink(path);
    sp_profiler_destroy(f.prof);
}

/* Ranges nested in each other, open across several steps and left open at
 * the end, on the stepping thread: every piece nests (checked on the JSON),
 * and an unclosed range keeps UNCLOSED on its last piece only. */
static void test_profiler_nested_ranges_across_steps_nest_in_the_trace(void)
{
    fixture f;
    setup(&f);
    CHECK_OK(sp_profiler_create(&f.opts, &f.prof));
    CHECK_OK(sp_profiler_start(f.prof));
    sp_range_begin(SP_EVENT_USER_DEFINED, "outer");
    sp_range_begin(SP_EVENT_FORWARD, "inner");
    CHECK_OK(sp_profiler_step(f.prof, 1));
    sp_range_end(); /* inner ends in step 1 */
    sp_range_begin(SP_EVENT_BACKWARD, "late"); /* begins in step 1, never ends */
    CHECK_OK(sp_profiler_step(f.prof, 1));
    CHECK_OK(sp_profiler_step(f.prof, 1));
    sp_range_end(); /* ends "late": outer stays open */
    sp_range_begin(SP_EVENT_OPTIMIZATION, "open at stop");
    CHECK_OK(sp_profiler_stop(f.prof));
    const sp_result *r = sp_profiler_result(f.prof);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_OVERLAP));
    /* outer, inner and late are cut; "open at stop" began in the last step
     * and ends at the span's end (UNCLOSED), where the last step and outer's
     * last piece now end too. */
    CHECK_U64_EQ(3, sp_result_counter(r, SP_COUNTER_SPLIT_RANGES));
    CHECK_U64_EQ(2, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    int unclosed_outer = 0, at_stop = 0;
    int64_t last_step_end = 0, outer_end = 0, at_stop_end = -1;
    sp_event_info e;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (strcmp(e.name, "ProfileStep#3") == 0) last_step_end = e.end_ns;
        if (strcmp(e.name, "outer") == 0 && (e.flags & SP_EVENT_FLAG_UNCLOSED)) {
            unclosed_outer++;
            outer_end = e.end_ns;
        }
        if (strcmp(e.name, "open at stop") == 0) {
            at_stop++;
            at_stop_end = e.end_ns;
            CHECK_EQ(SP_EVENT_FLAG_UNCLOSED, e.flags);
        }
    }
    CHECK_EQ(1, unclosed_outer);
    CHECK_EQ(1, at_stop);
    int64_t span_end = 0;
    sp_result_span(r, NULL, &span_end);
    CHECK_EQ(span_end, last_step_end);
    CHECK_EQ(last_step_end, outer_end);
    CHECK_EQ(last_step_end, at_stop_end);
    char path[] = "/tmp/stepprof-nest-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_OK(sp_profiler_export(f.prof, path, SP_FORMAT_JSON));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -B %s/tests/trace/nestcheck.py %s >/dev/null", SP_PYTHON,
             SP_SOURCE_DIR, path);
    CHECK_EQ(0, system(cmd));
    unlink(path);
    sp_profiler_destroy(f.prof);
}

int main(void)
{
    RUN_TEST(test_profiler_make_scheduler_fires_once_per_period);
    RUN_TEST(test_profiler_skip_first_repeats_forever);
    RUN_TEST(test_profiler_range_form_records_exactly_once);
    RUN_TEST(test_profiler_default_returns_one_span_at_stop);
    RUN_TEST(test_profiler_record_one_returns_every_step);
    RUN_TEST(test_profiler_back_to_back_spans_record_and_return);
    RUN_TEST(test_profiler_improper_transitions_warn_and_discard);
    RUN_TEST(test_profiler_stop_in_record_returns_result);
    RUN_TEST(test_profiler_ready_data_is_discarded);
    RUN_TEST(test_profiler_misuse_returns_estate);
    RUN_TEST(test_profiler_second_profiler_gets_ebusy_then_retries);
    RUN_TEST(test_profiler_timer_only_records_nothing);
    RUN_TEST(test_profiler_create_warnings);
    RUN_TEST(test_profiler_destroy_while_recording_delivers_the_span);
    RUN_TEST(test_profiler_calls_from_on_trace_ready_get_ebusy);
    RUN_TEST(test_profiler_destroy_from_on_trace_ready_is_deferred);
    RUN_TEST(test_profiler_start_after_stop_restarts);
    RUN_TEST(test_profiler_user_range_open_across_step_keeps_steps_intact);
    RUN_TEST(test_profiler_nested_ranges_across_steps_nest_in_the_trace);
    return TEST_SUMMARY();
}
