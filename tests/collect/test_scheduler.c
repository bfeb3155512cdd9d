/* test_scheduler.c: checks the step -> state functions of scheduler.c against
 * semantics.md §2. Each scheduler is rendered as one letter per step
 * (C = CLOSED, W = READY, R = RECORD, A = RECORD_AND_RETURN) and compared with
 * a sequence derived by hand from the formulas of §2.1, so a failure shows the
 * whole sequence at once. Also checks argument validation, which must leave
 * the output untouched, and the warnings of §2.1 and §2.3. */
#include "check.h"
#include "collect.h"

#include <stdint.h>
#include <string.h>

#define WARN_READY                                                             \
    "Profiler will record data after enabling profiler immediately, some data " \
    "collected at the beginning of profiling may be 'noisy' because of overhead."
#define WARN_WARMUP "Profiler won't be using warmup, this can skew profiler results"
#define INVALID_TEXT "Invalid profiler scheduler arguments"

static char state_letter(sp_state st)
{
    switch (st) {
    case SP_STATE_CLOSED: return 'C';
    case SP_STATE_READY: return 'W';
    case SP_STATE_RECORD: return 'R';
    case SP_STATE_RECORD_AND_RETURN: return 'A';
    }
    return '?'; /* a value outside sp_state leaked through */
}

/* Renders the states of steps first .. first+n-1; the string stays valid
 * until the next call. */
static const char *states_from(const sp_scheduler *s, int64_t first, int n)
{
    static char buf[256];
    if (n > (int)sizeof buf - 1) n = (int)sizeof buf - 1;
    for (int i = 0; i < n; i++) buf[i] = state_letter(sp_scheduler_state(s, first + i));
    buf[n] = '\0';
    return buf;
}

/* Renders the states of steps 0 .. strlen(want)-1 and compares with want. */
#define CHECK_STATES(want, sched) CHECK_STR_EQ((want), states_from((sched), 0, (int)strlen(want)))

static char at(const sp_scheduler *s, int64_t step)
{
    return state_letter(sp_scheduler_state(s, step));
}

/* semantics.md §2.1, first example: (closed=1, ready=1, record=4, repeat=1). */
static void test_scheduler_paddle_example_repeat_once(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 1, 1, 4, 1, 0));
    CHECK_EQ(SP_SCHEDULER_CYCLE, s.form);
    CHECK_STATES("CWRRRACCCCCCCCCCCCCC", &s);
    CHECK_EQ('C', at(&s, 1000));
    CHECK_EQ('C', at(&s, 1000001));
}

/* semantics.md §2.1, second example: (1, 1, 4, skip_first=1) records [3,6],
 * [9,12], [15,18], ... forever. */
static void test_scheduler_paddle_example_skip_first_forever(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 1, 1, 4, 0, 1));
    /*            0         1
     *            0123456789012345678 */
    CHECK_STATES("CCWRRRACWRRRACWRRRA", &s);
    /* Cycle k (k >= 0) records [3 + 6k, 6 + 6k]; check k = 1000. */
    CHECK_STR_EQ("CWRRRACW", states_from(&s, 6001, 8));
}

static void test_scheduler_record_one_is_always_record_and_return(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 2, 1, 1, 0, 0));
    CHECK_STATES("CCWACCWACCWACCWA", &s);
    CHECK_OK(sp_scheduler_make(&s, 0, 0, 1, 0, 0));
    CHECK_STATES("AAAAAAAAAA", &s);
    CHECK_EQ('A', at(&s, 123456789));
    CHECK_OK(sp_scheduler_make(&s, 0, 2, 1, 2, 1));
    CHECK_STATES("CWWAWWACCCC", &s);
}

static void test_scheduler_repeat_stops_after_cycles(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 1, 0, 2, 3, 0));
    CHECK_STATES("CRACRACRACCCCCCCCC", &s);
    CHECK_OK(sp_scheduler_make(&s, 2, 1, 3, 3, 0));
    CHECK_STATES("CCWRRACCWRRACCWRRACCCCCCC", &s);
    CHECK_EQ('C', at(&s, 1000000));
}

static void test_scheduler_repeat_zero_goes_forever(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 2, 1, 3, 0, 0));
    CHECK_STATES("CCWRRACCWRRACCWRRACCWRRACCWRRA", &s);
    /* 9996 = 6 * 1666 starts a cycle. */
    CHECK_STR_EQ("CCWRRACC", states_from(&s, 9996, 8));
    CHECK_EQ('R', at(&s, 10000));
    CHECK_EQ('A', at(&s, 10001));
    /* INT64_MAX = 6k + 1 */
    CHECK_EQ('C', at(&s, INT64_MAX));
    CHECK_EQ('W', at(&s, INT64_MAX - 5));
    CHECK_EQ('A', at(&s, INT64_MAX - 2));
}

static void test_scheduler_skip_first(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 1, 1, 2, 2, 3));
    CHECK_STATES("CCCCWRACWRACCCCCC", &s);
    /* skip_first with no closed phase: recording starts right after it. */
    CHECK_OK(sp_scheduler_make(&s, 0, 1, 2, 1, 5));
    CHECK_STATES("CCCCCWRACCCC", &s);
    /* skip_first == 0 changes nothing. */
    CHECK_OK(sp_scheduler_make(&s, 1, 1, 2, 1, 0));
    CHECK_STATES("CWRACCC", &s);
}

static void test_scheduler_ready_zero(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 2, 0, 3, 0, 0));
    CHECK_STATES("CCRRACCRRACCRRA", &s);
    CHECK_OK(sp_scheduler_make(&s, 0, 0, 3, 2, 0));
    CHECK_STATES("RRARRACCCC", &s);
    CHECK_OK(sp_scheduler_make(&s, 0, 0, 2, 0, 1));
    CHECK_STATES("CRARARA", &s);
}

/* semantics.md §2.2: (2, 5) records steps 2, 3, 4; step 1 is READY. */
static void test_scheduler_range_records_once(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_range(&s, 2, 5));
    CHECK_STATES("CWRRACCCCCCC", &s);
    CHECK_EQ('C', at(&s, 8));
    CHECK_EQ('C', at(&s, 1000000));

    CHECK_OK(sp_scheduler_range(&s, 1, 2));
    CHECK_STATES("WACCCC", &s);

    CHECK_OK(sp_scheduler_range(&s, 5, 6));
    CHECK_STATES("CCCCWACCC", &s);

    CHECK_OK(sp_scheduler_range(&s, 3, 8));
    CHECK_STATES("CCWRRRRACCCC", &s);
}

/* (0, 3): closed 0, ready 0, record 3 (and the ready == 0 warning). */
static void test_scheduler_range_from_zero_has_no_ready(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_range(&s, 0, 3));
    CHECK_STATES("RRACCCCC", &s);
    CHECK_EQ(0, s.ready);
    CHECK_STR_EQ(WARN_READY, sp__scheduler_warning(&s));

    CHECK_OK(sp_scheduler_range(&s, 0, 1));
    CHECK_STATES("ACCC", &s);
}

static void test_scheduler_range_negative_start_clamped(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_range(&s, -4, 2));
    CHECK_STATES("RACCCC", &s);
    CHECK_OK(sp_scheduler_range(&s, INT64_MIN, 1));
    CHECK_STATES("ACCC", &s);
    CHECK_OK(sp_scheduler_range(&s, -1, 3));
    CHECK_STATES("RRACCC", &s);
}

static void test_scheduler_torch_form(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_torch(&s, 1, 1, 2, 2, 0, 0));
    CHECK_EQ(SP_SCHEDULER_TORCH, s.form);
    CHECK_STATES("CWRACWRACCCC", &s);
    /* Identical arithmetic to make_scheduler, skip_first included. */
    sp_scheduler m;
    CHECK_OK(sp_scheduler_make(&m, 3, 2, 4, 0, 2));
    CHECK_OK(sp_scheduler_torch(&s, 3, 2, 4, 0, 2, 0));
    char want[128];
    strcpy(want, states_from(&m, 0, 100));
    CHECK_STR_EQ(want, states_from(&s, 0, 100));
    CHECK_STATES("CCCCCWWRRRACCCWWRRRA", &s);
    /* repeat = 0 forever, as with make_scheduler. */
    CHECK_EQ(at(&m, 100003), at(&s, 100003));
}

/* skip_first_wait: the first cycle has no wait phase; later cycles do, and
 * repeat still counts whole cycles. */
static void test_scheduler_torch_skip_first_wait(void)
{
    sp_scheduler s;
    /* wait 2, warmup 1, active 2, repeat 2, skip_first 1. */
    CHECK_OK(sp_scheduler_torch(&s, 2, 1, 2, 2, 1, 1));
    CHECK_STATES("CWRACCWRACCCCCC", &s);
    /* The same without skip_first_wait, for comparison. */
    CHECK_OK(sp_scheduler_torch(&s, 2, 1, 2, 2, 1, 0));
    CHECK_STATES("CCCWRACCWRACCCCC", &s);
    /* No skip_first, forever. */
    CHECK_OK(sp_scheduler_torch(&s, 3, 1, 1, 0, 0, 1));
    CHECK_STATES("WACCCWACCCWACCC", &s);
    /* Any non-zero skip_first_wait means yes. */
    CHECK_OK(sp_scheduler_torch(&s, 3, 1, 1, 0, 0, 7));
    CHECK_STATES("WACCCWACCCWACCC", &s);
    CHECK_OK(sp_scheduler_torch(&s, 3, 1, 1, 0, 0, -1));
    CHECK_STATES("WACCCWACCCWACCC", &s);
    /* wait == 0: skip_first_wait changes nothing. */
    CHECK_OK(sp_scheduler_torch(&s, 0, 1, 2, 1, 0, 1));
    CHECK_STATES("WRACCC", &s);
}

/* A zeroed struct is the default scheduler: RECORD for every step, never
 * RECORD_AND_RETURN (semantics.md §2.5). */
static void test_scheduler_default_records_every_step(void)
{
    sp_scheduler s;
    memset(&s, 0, sizeof s);
    CHECK_EQ(SP_SCHEDULER_DEFAULT, s.form);
    CHECK_STATES("RRRRRRRRRRRRRRRRRRRRRRRRRRRRRR", &s);
    CHECK_EQ('R', at(&s, 10000));
    CHECK_EQ('R', at(&s, INT64_MAX));
    CHECK_EQ('C', at(&s, -1));

    sp_options opts;
    sp_options_init(&opts);
    CHECK_EQ(SP_SCHEDULER_DEFAULT, opts.scheduler.form);
    CHECK_STATES("RRRRR", &opts.scheduler);
}

/* Custom callback: a pattern repeated; 'X' and 'N' return values outside
 * sp_state, which count as CLOSED. */
typedef struct custom_ctx {
    const char *pattern;
    int calls;
    int64_t last_step;
} custom_ctx;

static sp_state custom_fn(int64_t step, void *user)
{
    custom_ctx *c = user;
    c->calls++;
    c->last_step = step;
    char ch = c->pattern[step % (int64_t)strlen(c->pattern)];
    switch (ch) {
    case 'W': return SP_STATE_READY;
    case 'R': return SP_STATE_RECORD;
    case 'A': return SP_STATE_RECORD_AND_RETURN;
    case 'X': return (sp_state)7;
    case 'N': return (sp_state)-1;
    case 'B': return (sp_state)4;
    default: return SP_STATE_CLOSED;
    }
}

static void test_scheduler_custom_callback_with_user_data(void)
{
    custom_ctx ctx = {"WRAC", 0, -1};
    sp_scheduler s;
    CHECK_OK(sp_scheduler_custom(&s, custom_fn, &ctx));
    CHECK_EQ(SP_SCHEDULER_CUSTOM, s.form);
    CHECK(s.user == &ctx);
    CHECK_STATES("WRACWRACWRAC", &s);
    CHECK_EQ(12, ctx.calls);
    CHECK_EQ(11, ctx.last_step);
    /* Improper sequences are legal. */
    custom_ctx odd = {"ARWCCRA", 0, -1};
    CHECK_OK(sp_scheduler_custom(&s, custom_fn, &odd));
    CHECK_STATES("ARWCCRAARWCCRA", &s);
    CHECK_EQ('R', at(&s, 1000000)); /* 1000000 % 7 == 1 */
    CHECK_EQ(1000000, odd.last_step);
}

static void test_scheduler_custom_out_of_range_value_is_closed(void)
{
    custom_ctx ctx = {"RXANBW", 0, -1};
    sp_scheduler s;
    CHECK_OK(sp_scheduler_custom(&s, custom_fn, &ctx));
    CHECK_STATES("RCACCWRCACCW", &s);
    CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(&s, 1));
    CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(&s, 3));
    CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(&s, 4));
}

static void test_scheduler_negative_step_is_closed(void)
{
    static const int64_t steps[] = {-1, -2, -6, -1000, INT64_MIN};
    sp_scheduler forms[5];
    custom_ctx ctx = {"R", 0, -1};
    memset(&forms[0], 0, sizeof forms[0]);
    CHECK_OK(sp_scheduler_make(&forms[1], 0, 0, 1, 0, 0));
    CHECK_OK(sp_scheduler_torch(&forms[2], 2, 1, 3, 0, 0, 1));
    CHECK_OK(sp_scheduler_range(&forms[3], 0, 5));
    CHECK_OK(sp_scheduler_custom(&forms[4], custom_fn, &ctx));
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
            CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(&forms[f], steps[i]));
        CHECK(sp_scheduler_state(&forms[f], 0) != SP_STATE_CLOSED);
    }
    CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(NULL, 0));
    CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(NULL, 5));
}

/* Checks that a constructor call failed with SP_EINVAL and the given text,
 * and left *out as it was. */
#define CHECK_INVALID(text, call)                                              \
    do {                                                                       \
        memset(&s, 0x5A, sizeof s);                                            \
        memcpy(&before, &s, sizeof s);                                         \
        CHECK_EQ(SP_EINVAL, (call));                                           \
        CHECK_STR_EQ((text), sp_last_error());                                 \
        CHECK(memcmp(&before, &s, sizeof s) == 0);                             \
    } while (0)

static void test_scheduler_invalid_arguments(void)
{
    sp_scheduler s, before;
    /* make_scheduler: closed >= 0, ready >= 0, record > 0, repeat >= 0,
     * skip_first >= 0; the message keeps paddle's words and says which. */
    CHECK_INVALID(INVALID_TEXT ": record (0) must be greater than 0",
                  sp_scheduler_make(&s, 1, 1, 0, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": record (-1) must be greater than 0",
                  sp_scheduler_make(&s, 1, 1, -1, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": closed (-1) must be >= 0", sp_scheduler_make(&s, -1, 1, 1, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": ready (-1) must be >= 0", sp_scheduler_make(&s, 1, -1, 1, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": repeat (-1) must be >= 0 (0 repeats forever)",
                  sp_scheduler_make(&s, 1, 1, 1, -1, 0));
    CHECK_INVALID(INVALID_TEXT ": skip_first (-1) must be >= 0",
                  sp_scheduler_make(&s, 1, 1, 1, 0, -1));
    CHECK_INVALID(INVALID_TEXT ": closed (-9223372036854775808) must be >= 0",
                  sp_scheduler_make(&s, INT64_MIN, 0, 1, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": record (2305843009213693952) must be at most 2305843009213693951",
                  sp_scheduler_make(&s, 0, 0, INT64_MAX / 4 + 1, 0, 0));
    CHECK_EQ(SP_EINVAL, sp_scheduler_make(NULL, 1, 1, 1, 0, 0));
    CHECK_STR_EQ(INVALID_TEXT ": the scheduler to fill is NULL", sp_last_error());

    /* torch: the same rules, under torch's names. */
    CHECK_INVALID(INVALID_TEXT ": active (0) must be greater than 0",
                  sp_scheduler_torch(&s, 1, 1, 0, 0, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": wait (-1) must be >= 0",
                  sp_scheduler_torch(&s, -1, 1, 1, 0, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": warmup (-1) must be >= 0",
                  sp_scheduler_torch(&s, 1, -1, 1, 0, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": repeat (-1) must be >= 0 (0 repeats forever)",
                  sp_scheduler_torch(&s, 1, 1, 1, -1, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": skip_first (-1) must be >= 0",
                  sp_scheduler_torch(&s, 1, 1, 1, 0, -1, 1));

    /* range: end > start (after clamping start to 0). */
    CHECK_INVALID(INVALID_TEXT ": end (5) must be greater than start (5)",
                  sp_scheduler_range(&s, 5, 5));
    CHECK_INVALID(INVALID_TEXT ": end (3) must be greater than start (5)",
                  sp_scheduler_range(&s, 5, 3));
    CHECK_INVALID(INVALID_TEXT ": end (0) must be greater than start (0)",
                  sp_scheduler_range(&s, 0, 0));
    CHECK_INVALID(INVALID_TEXT ": end (-1) must be greater than 0 (steps are numbered from 0)",
                  sp_scheduler_range(&s, -5, -1));
    CHECK_INVALID(INVALID_TEXT ": end (0) must be greater than 0 (steps are numbered from 0)",
                  sp_scheduler_range(&s, -3, 0));
    CHECK_EQ(SP_EINVAL, sp_scheduler_range(NULL, 1, 2));
    CHECK_STR_EQ(INVALID_TEXT ": the scheduler to fill is NULL", sp_last_error());

    /* custom: fn must not be NULL. */
    memset(&s, 0x5A, sizeof s);
    memcpy(&before, &s, sizeof s);
    CHECK_EQ(SP_EINVAL, sp_scheduler_custom(&s, NULL, &s));
    CHECK_STR_EQ(INVALID_TEXT ": the scheduler function is NULL", sp_last_error());
    CHECK(memcmp(&before, &s, sizeof s) == 0);

    /* torch with skip_first_wait near INT64_MAX must not overflow. */
    CHECK_OK(sp_scheduler_torch(&s, 5, 1, 2, 0, 0, 1));
    CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(&s, INT64_MAX - 2));

    /* The boundaries themselves are valid. */
    CHECK_OK(sp_scheduler_make(&s, 0, 0, 1, 0, 0));
    CHECK_OK(sp_scheduler_torch(&s, 0, 0, 1, 0, 0, 0));
    CHECK_OK(sp_scheduler_range(&s, 0, 1));
}

static void test_scheduler_warning_texts(void)
{
    sp_scheduler s;
    CHECK_OK(sp_scheduler_make(&s, 1, 0, 2, 0, 0));
    CHECK_STR_EQ(WARN_READY, sp__scheduler_warning(&s));
    CHECK_OK(sp_scheduler_make(&s, 0, 0, 1, 0, 0));
    CHECK_STR_EQ(WARN_READY, sp__scheduler_warning(&s));
    CHECK_OK(sp_scheduler_make(&s, 1, 1, 2, 0, 0));
    CHECK(sp__scheduler_warning(&s) == NULL);

    CHECK_OK(sp_scheduler_torch(&s, 1, 0, 2, 0, 0, 0));
    CHECK_STR_EQ(WARN_WARMUP, sp__scheduler_warning(&s));
    CHECK_OK(sp_scheduler_torch(&s, 1, 0, 2, 0, 0, 1));
    CHECK_STR_EQ(WARN_WARMUP, sp__scheduler_warning(&s));
    CHECK_OK(sp_scheduler_torch(&s, 0, 1, 2, 0, 0, 0));
    CHECK(sp__scheduler_warning(&s) == NULL);

    CHECK_OK(sp_scheduler_range(&s, 0, 3));
    CHECK_STR_EQ(WARN_READY, sp__scheduler_warning(&s));
    CHECK_OK(sp_scheduler_range(&s, 1, 3));
    CHECK(sp__scheduler_warning(&s) == NULL);

    memset(&s, 0, sizeof s);
    CHECK(sp__scheduler_warning(&s) == NULL);
    custom_ctx ctx = {"R", 0, -1};
    CHECK_OK(sp_scheduler_custom(&s, custom_fn, &ctx));
    CHECK(sp__scheduler_warning(&s) == NULL);
}

int main(void)
{
    RUN_TEST(test_scheduler_paddle_example_repeat_once);
    RUN_TEST(test_scheduler_paddle_example_skip_first_forever);
    RUN_TEST(test_scheduler_record_one_is_always_record_and_return);
    RUN_TEST(test_scheduler_repeat_stops_after_cycles);
    RUN_TEST(test_scheduler_repeat_zero_goes_forever);
    RUN_TEST(test_scheduler_skip_first);
    RUN_TEST(test_scheduler_ready_zero);
    RUN_TEST(test_scheduler_range_records_once);
    RUN_TEST(test_scheduler_range_from_zero_has_no_ready);
    RUN_TEST(test_scheduler_range_negative_start_clamped);
    RUN_TEST(test_scheduler_torch_form);
    RUN_TEST(test_scheduler_torch_skip_first_wait);
    RUN_TEST(test_scheduler_default_records_every_step);
    RUN_TEST(test_scheduler_custom_callback_with_user_data);
    RUN_TEST(test_scheduler_custom_out_of_range_value_is_closed);
    RUN_TEST(test_scheduler_negative_step_is_closed);
    RUN_TEST(test_scheduler_invalid_arguments);
    RUN_TEST(test_scheduler_warning_texts);
    return TEST_SUMMARY();
}
