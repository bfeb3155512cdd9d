/* test_timer.c: checks the timer_only benchmark event of timer.c against
 * semantics.md §7 and the fixes of §9. Each test feeds a hand-built sequence
 * of reader ranges and steps (times in ns, no clock) and compares the whole
 * step_info string or Perf Summary with a text worked out by hand; the
 * arithmetic is written above each expectation. Costs print as "%.5f"
 * seconds, per-step ips and averages as "%.5f" in the summary and "%.3f" in
 * step_info. */
#include "check.h"
#include "../../src/analyze/timer.h"

#include <stdint.h>
#include <string.h>

#define MS 1000000LL /* ns per ms */

#define TITLE                                                                  \
    "============================================Perf Summary"                 \
    "============================================\n"
#define HEADER "|                 |       avg       |       max       |       min       |\n"

/* One training step that starts at *now: a reader range of reader_ms on
 * reader id (skipped if reader_ms < 0), then the step ends batch_ms after the
 * step began, so batch_cost = batch_ms (it includes the load). */
static void step_ms(sp__timer *t, int64_t *now, uint64_t id, int64_t reader_ms, int64_t batch_ms,
                    int64_t samples)
{
    int64_t begin = *now;
    if (reader_ms >= 0) sp__timer_reader(t, id, reader_ms * MS, begin + reader_ms * MS);
    *now = begin + batch_ms * MS;
    sp__timer_step(t, *now, samples);
}

static void steps_ms(sp__timer *t, int64_t *now, int n, int64_t reader_ms, int64_t batch_ms,
                     int64_t samples)
{
    for (int i = 0; i < n; i++) step_ms(t, now, 1, reader_ms, batch_ms, samples);
}

/* Renders the Perf Summary into a static buffer (valid until the next call). */
static const char *summary(const sp__timer *t)
{
    static char text[4096];
    sp__buf b;
    sp__buf_init(&b);
    sp__timer_perf_summary(t, &b);
    snprintf(text, sizeof text, "%s", sp__buf_cstr(&b));
    CHECK(!b.failed);
    sp__buf_fini(&b);
    return text;
}

static const char *step_info(sp__timer *t, const char *unit)
{
    static char text[512];
    sp__buf b;
    sp__buf_init(&b);
    sp__timer_step_info(t, unit, &b);
    snprintf(text, sizeof text, "%s", sp__buf_cstr(&b));
    CHECK(!b.failed);
    sp__buf_fini(&b);
    return text;
}

static void check_no_nan_inf(const char *s)
{
    CHECK(strstr(s, "nan") == NULL);
    CHECK(strstr(s, "inf") == NULL);
    CHECK(strstr(s, "NaN") == NULL);
}

static void test_timer_center15_lengths_0_to_16(void)
{
    /* p = 15 - n; left = p/2 + 1 if p odd else p/2; right = p - left.
     * n=0: p=15 -> 8+7; n=1: 14 -> 7+7; n=2: 13 -> 7+6; n=3: 12 -> 6+6;
     * n=4: 11 -> 6+5; n=5: 10 -> 5+5; n=6: 9 -> 5+4; n=7: 8 -> 4+4;
     * n=8: 7 -> 4+3; n=9: 6 -> 3+3; n=10: 5 -> 3+2; n=11: 4 -> 2+2;
     * n=12: 3 -> 2+1; n=13: 2 -> 1+1; n=14: 1 -> 1+0; n=15: 0 -> 0+0;
     * n=16: longer than the width, appended as is (Python's center). */
    static const char *const expected[17] = {
        "[               ]", "[       x       ]", "[       xx      ]", "[      xxx      ]",
        "[      xxxx     ]", "[     xxxxx     ]", "[     xxxxxx    ]", "[    xxxxxxx    ]",
        "[    xxxxxxxx   ]", "[   xxxxxxxxx   ]", "[   xxxxxxxxxx  ]", "[  xxxxxxxxxxx  ]",
        "[  xxxxxxxxxxxx ]", "[ xxxxxxxxxxxxx ]", "[ xxxxxxxxxxxxxx]", "[xxxxxxxxxxxxxxx]",
        "[xxxxxxxxxxxxxxxx]",
    };
    for (int n = 0; n <= 16; n++) {
        char text[17];
        memset(text, 'x', (size_t)n);
        text[n] = '\0';
        sp__buf b;
        sp__buf_init(&b);
        sp__buf_putc(&b, '[');
        sp__center15(&b, text);
        sp__buf_putc(&b, ']');
        CHECK_STR_EQ(expected[n], sp__buf_cstr(&b));
        sp__buf_fini(&b);
    }
}

static void test_timer_constant_12_steps(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 12, 20, 100, 32);
    CHECK_EQ(12, sp__timer_steps(&t));
    /* N = 12, R = 2 (steps 11, 12).
     * reader: 20 ms at steps 11, 12 -> total 0.040 s / 2 = 0.02000; max = min = 0.02000.
     * batch: 100 ms each -> 0.200 s / 2 = 0.10000; max = min = 0.10000.
     * ips: each step 32 / 0.1 = 320; avg = 64 samples / 0.2 s = 320.00000.
     * ratio = 100 * 0.02 / 0.1 = 20.000.
     * "0.02000" is 7 chars: p = 8, 4 + 4; "320.00000" is 9: p = 6, 3 + 3;
     * "reader_cost" 11: 2 + 2; "batch_cost" 10: 3 + 2; "ips" 3: 6 + 6. */
    const char *expected = TITLE
        "Reader Ratio: 20.000%\n"
        "Time Unit: s, IPS Unit: samples/s\n"
        HEADER
        "|   reader_cost   |     0.02000     |     0.02000     |     0.02000     |\n"
        "|    batch_cost   |     0.10000     |     0.10000     |     0.10000     |\n"
        "|       ips       |    320.00000    |    320.00000    |    320.00000    |\n";
    const char *got = summary(&t);
    CHECK_STR_EQ(expected, got);
    /* Title 100 + '\n', ratio line 21 + '\n', unit line 33 + '\n', then 4
     * table lines of 73 characters + '\n'. */
    CHECK_EQ(100 + 1 + 21 + 1 + 33 + 1 + 4 * 74, strlen(got));
}

static void test_timer_varying_15_steps_uses_steps_11_to_15(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    /* Steps 1..10 are warm-up with outsized values (reader 500 ms, batch
     * 1000 ms, 7 samples): none of them may reach a record. Step 10 is the one
     * paddle's off-by-one would have recorded. */
    steps_ms(&t, &now, 10, 500, 1000, 7);
    /* Steps 11..15 (reader ms, batch ms, samples 64 each):
     *   11: 35, 400 -> ips 64/0.40 =  160
     *   12: 10, 100 -> ips 64/0.10 =  640
     *   13: 30, 250 -> ips 64/0.25 =  256
     *   14:  5,  50 -> ips 64/0.05 = 1280
     *   15: 20, 200 -> ips 64/0.20 =  320
     * The first value is the largest, so paddle's "if greater ... elif
     * smaller" would have left reader min at inf and ips min at 256. */
    step_ms(&t, &now, 1, 35, 400, 64);
    step_ms(&t, &now, 1, 10, 100, 64);
    step_ms(&t, &now, 1, 30, 250, 64);
    step_ms(&t, &now, 1, 5, 50, 64);
    step_ms(&t, &now, 1, 20, 200, 64);
    CHECK_EQ(15, sp__timer_steps(&t));
    /* R = 5.
     * reader: total 100 ms / 5 = 0.02000; max 0.03500; min 0.00500.
     * batch: total 1000 ms / 5 = 0.20000; max 0.40000; min 0.05000.
     * ips: avg 320 samples / 1.0 s = 320.00000; max 1280.00000; min 160.00000.
     * ratio = 100 * 0.02 / 0.2 = 10.000.
     * "1280.00000" is 10 chars: p = 5, 3 + 2. */
    CHECK_STR_EQ(TITLE
                 "Reader Ratio: 10.000%\n"
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|   reader_cost   |     0.02000     |     0.03500     |     0.00500     |\n"
                 "|    batch_cost   |     0.20000     |     0.40000     |     0.05000     |\n"
                 "|       ips       |    320.00000    |    1280.00000   |    160.00000    |\n",
                 summary(&t));
}

static void test_timer_summary_needs_more_than_10_steps(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    CHECK_STR_EQ("", summary(&t)); /* N = 0 */
    steps_ms(&t, &now, 10, 10, 100, 4);
    CHECK_EQ(10, sp__timer_steps(&t));
    CHECK_STR_EQ("", summary(&t)); /* N = 10: R would be 0 */
    step_ms(&t, &now, 1, 10, 100, 4);
    /* N = 11, R = 1: step 11 alone (its reader was read with N = 10).
     * reader 0.01000, batch 0.10000, ips 4 / 0.1 = 40.00000, min = max = avg.
     * ratio = 100 * 0.01 / 0.1 = 10.000. "40.00000" is 8 chars: p = 7, 4 + 3. */
    CHECK_STR_EQ(TITLE
                 "Reader Ratio: 10.000%\n"
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|   reader_cost   |     0.01000     |     0.01000     |     0.01000     |\n"
                 "|    batch_cost   |     0.10000     |     0.10000     |     0.10000     |\n"
                 "|       ips       |     40.00000    |     40.00000    |     40.00000    |\n",
                 summary(&t));
}

static void test_timer_steps_mode_is_sticky_and_never_mixes_units(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 11, -1, 100, 64); /* steps 1..11: samples mode, 640 samples/s */
    step_ms(&t, &now, 1, -1, 100, -1);   /* step 12: no num_samples -> steps/s */
    step_ms(&t, &now, 1, -1, 200, 64);   /* step 13: samples again, still steps/s */
    /* step_info window = steps 1..13: batch 12 * 0.1 + 0.2 = 1.4 s, count 13.
     * batch_avg = 1.4 / 13 = 0.107692.. -> "0.10769";
     * steps mode: ips = 13 / 1.4 = 9.285714.. -> "9.286 steps/s" (the unit
     * argument is ignored in steps mode). No reader -> no reader_cost. */
    CHECK_STR_EQ(" batch_cost: 0.10769 s ips: 9.286 steps/s", step_info(&t, "images"));
    /* R = 3 (steps 11..13): batch 0.1, 0.1, 0.2 -> total 0.4, avg 0.13333,
     * max 0.20000, min 0.10000.
     * steps/s record: 1/0.1 = 10, 10, 1/0.2 = 5 -> max 10.00000, min 5.00000;
     * avg = R / total = 3 / 0.4 = 7.50000. Step 11's 640 samples/s stays in
     * the samples/s record, so it can't show up as the max.
     * No reader -> no ratio line, no reader_cost row. */
    CHECK_STR_EQ(TITLE
                 "Time Unit: s, IPS Unit: steps/s\n"
                 HEADER
                 "|    batch_cost   |     0.13333     |     0.20000     |     0.10000     |\n"
                 "|       ips       |     7.50000     |     10.00000    |     5.00000     |\n",
                 summary(&t));
}

static void test_timer_step_info_windows_and_unit(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 10, 20, 100, 32);
    /* First call covers steps 1..10 (warm-up included):
     * reader 10 * 20 ms / 10 = 0.02000; batch 10 * 100 ms / 10 = 0.10000;
     * ips = 320 samples / 1.0 s = 320.000; unit NULL -> "samples". */
    CHECK_STR_EQ(" reader_cost: 0.02000 s batch_cost: 0.10000 s ips: 320.000 samples/s",
                 step_info(&t, NULL));
    steps_ms(&t, &now, 2, 50, 200, 16);
    /* Second call: steps 11, 12 only: reader 0.05000, batch 0.20000,
     * ips = 32 samples / 0.4 s = 80.000 images/s. */
    CHECK_STR_EQ(" reader_cost: 0.05000 s batch_cost: 0.20000 s ips: 80.000 images/s",
                 step_info(&t, "images"));
    /* Nothing since: empty string, and the summary's unit stays images/s. */
    CHECK_STR_EQ("", step_info(&t, "tokens"));
    /* R = 2: reader 50, 50 ms -> 0.05000; batch 200, 200 ms -> 0.20000;
     * ips 16 / 0.2 = 80 each, avg 32 / 0.4 = 80.00000; ratio 100 * 0.05 / 0.2 = 25.000. */
    CHECK_STR_EQ(TITLE
                 "Reader Ratio: 25.000%\n"
                 "Time Unit: s, IPS Unit: images/s\n"
                 HEADER
                 "|   reader_cost   |     0.05000     |     0.05000     |     0.05000     |\n"
                 "|    batch_cost   |     0.20000     |     0.20000     |     0.20000     |\n"
                 "|       ips       |     80.00000    |     80.00000    |     80.00000    |\n",
                 summary(&t));
}

static void test_timer_zero_reader_cost_ignored_ratio_line_optional(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    /* 11 steps whose reader ranges took 0 ns: ignored (§7), so reader_avg = 0.
     * R = 1: batch 0.25000; ips 8 / 0.25 = 32.00000 (avg 8 / 0.25 too). */
    steps_ms(&t, &now, 11, 0, 250, 8);
    CHECK_STR_EQ(TITLE
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|    batch_cost   |     0.25000     |     0.25000     |     0.25000     |\n"
                 "|       ips       |     32.00000    |     32.00000    |     32.00000    |\n",
                 summary(&t));
    /* Window = 11 steps of 250 ms, 88 samples / 2.75 s = 32.000. */
    CHECK_STR_EQ(" batch_cost: 0.25000 s ips: 32.000 samples/s", step_info(&t, NULL));

    /* Step 12 reads twice: a 0 ns range (ignored: neither averaged nor
     * recorded, so it can't be the min) and a 30 ms one; batch 250 ms.
     * Window: reader 0.03000 (one range), batch 0.25000, ips 8 / 0.25 = 32.000.
     * R = 2: reader total 30 ms / 2 = 0.01500, max = min = 0.03000;
     * ratio = 100 * 0.015 / 0.25 = 6.000. */
    sp__timer_reader(&t, 1, 0, now);
    sp__timer_reader(&t, 1, 30 * MS, now + 30 * MS);
    now += 250 * MS;
    sp__timer_step(&t, now, 8);
    CHECK_STR_EQ(" reader_cost: 0.03000 s batch_cost: 0.25000 s ips: 32.000 samples/s",
                 step_info(&t, NULL));
    CHECK_STR_EQ(TITLE
                 "Reader Ratio: 6.000%\n"
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|   reader_cost   |     0.01500     |     0.03000     |     0.03000     |\n"
                 "|    batch_cost   |     0.25000     |     0.25000     |     0.25000     |\n"
                 "|       ips       |     32.00000    |     32.00000    |     32.00000    |\n",
                 summary(&t));
}

static void test_timer_dataset_switch_pauses_and_resumes(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    /* Training reader 1: 11 steps, reader 10 ms, batch 100 ms, 10 samples. */
    steps_ms(&t, &now, 11, 10, 100, 10);
    CHECK_EQ(11, sp__timer_steps(&t));
    /* Evaluation reader 2 without its own start(): pauses. Its 3 s loads and
     * 1 s steps must not be counted. */
    for (int i = 0; i < 3; i++) step_ms(&t, &now, 2, 3000, 1000, 99);
    CHECK_EQ(11, sp__timer_steps(&t));
    /* Back to reader 1 at 10 s: resumes, step_start = 10 s; its 10 ms load
     * (recorded, N = 11) is passed with now = 10 s, then the step ends at 10.1 s. */
    now = 10000 * MS;
    sp__timer_reader(&t, 1, 10 * MS, now);
    now += 100 * MS;
    sp__timer_step(&t, now, 10);
    CHECK_EQ(12, sp__timer_steps(&t));
    /* R = 2: reader 10 + 10 ms -> 0.01000; batch 100 + 100 ms -> 0.10000
     * (the 9 s of evaluation excluded); ips 10 / 0.1 = 100.00000;
     * ratio 100 * 0.01 / 0.1 = 10.000. */
    CHECK_STR_EQ(TITLE
                 "Reader Ratio: 10.000%\n"
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|   reader_cost   |     0.01000     |     0.01000     |     0.01000     |\n"
                 "|    batch_cost   |     0.10000     |     0.10000     |     0.10000     |\n"
                 "|       ips       |    100.00000    |    100.00000    |    100.00000    |\n",
                 summary(&t));
    /* The window holds the 12 training steps only: reader 12 * 10 ms / 12,
     * batch 12 * 100 ms / 12, ips 120 / 1.2 = 100.000. */
    CHECK_STR_EQ(" reader_cost: 0.01000 s batch_cost: 0.10000 s ips: 100.000 samples/s",
                 step_info(&t, NULL));
}

static void test_timer_zero_cost_steps_give_no_nan_or_inf(void)
{
    sp__timer t;
    sp__timer_start(&t, 5 * MS);
    /* 12 steps all ending at the start time: batch 0, ips treated as 0. */
    for (int i = 0; i < 12; i++) sp__timer_step(&t, 5 * MS, 5);
    CHECK_STR_EQ("", step_info(&t, NULL)); /* batch_avg 0, ips 0 */
    const char *got = summary(&t);
    CHECK_STR_EQ(TITLE
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|    batch_cost   |     0.00000     |     0.00000     |     0.00000     |\n"
                 "|       ips       |     0.00000     |     0.00000     |     0.00000     |\n",
                 got);
    check_no_nan_inf(got);

    /* Steps mode, zero batches, but 1 ms reader ranges: the reader row shows
     * (step 11's range alone is recorded: 0.00100 / R = 1), the ratio would
     * divide by batch_avg = 0 and is left out. step_info: reader only. */
    sp__timer_start(&t, 0);
    for (int i = 0; i < 11; i++) {
        sp__timer_reader(&t, 7, 1 * MS, 0);
        sp__timer_step(&t, 0, -1);
    }
    got = summary(&t);
    CHECK_STR_EQ(TITLE
                 "Time Unit: s, IPS Unit: steps/s\n"
                 HEADER
                 "|   reader_cost   |     0.00100     |     0.00100     |     0.00100     |\n"
                 "|    batch_cost   |     0.00000     |     0.00000     |     0.00000     |\n"
                 "|       ips       |     0.00000     |     0.00000     |     0.00000     |\n",
                 got);
    check_no_nan_inf(got);
    CHECK_STR_EQ(" reader_cost: 0.00100 s", step_info(&t, NULL));

    /* One zero-cost step among 100 ms ones: its ips of 0 is the min.
     * R = 2 (steps 11: 0 ms, 12: 100 ms): batch avg 0.05000, max 0.10000,
     * min 0.00000; ips 0 and 2 / 0.1 = 20 -> avg 4 / 0.1 = 40.00000,
     * max 20.00000, min 0.00000. */
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 10, -1, 100, 2);
    sp__timer_step(&t, now, 2);
    steps_ms(&t, &now, 1, -1, 100, 2);
    got = summary(&t);
    CHECK_STR_EQ(TITLE
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|    batch_cost   |     0.05000     |     0.10000     |     0.00000     |\n"
                 "|       ips       |     40.00000    |     20.00000    |     0.00000     |\n",
                 got);
    check_no_nan_inf(got);
}

static void test_timer_start_resets_everything(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 12, 20, 100, 32);
    CHECK_STR_EQ(" reader_cost: 0.02000 s batch_cost: 0.10000 s ips: 320.000 images/s",
                 step_info(&t, "images"));
    sp__timer_reader(&t, 9, 1, now); /* another reader: paused */
    sp__timer_start(&t, now);
    CHECK_EQ(0, sp__timer_steps(&t));
    CHECK_STR_EQ("", summary(&t));
    CHECK_STR_EQ("", step_info(&t, NULL));
    /* Not paused any more, reader 9 binds, default unit again.
     * R = 1: batch 0.5 s, 1 sample -> 2.00000 samples/s. */
    steps_ms(&t, &now, 11, -1, 500, 1);
    sp__timer_reader(&t, 9, 0, now);
    CHECK_EQ(11, sp__timer_steps(&t));
    CHECK_STR_EQ(TITLE
                 "Time Unit: s, IPS Unit: samples/s\n"
                 HEADER
                 "|    batch_cost   |     0.50000     |     0.50000     |     0.50000     |\n"
                 "|       ips       |     2.00000     |     2.00000     |     2.00000     |\n",
                 summary(&t));
}

static void test_timer_long_unit_cut_for_summary_only(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 11, -1, 1000, 3);
    /* 60 ASCII bytes then "é" (2 bytes) then "z": 63 bytes. step_info prints
     * them all; the summary keeps 61 bytes, which would split "é", so it cuts
     * to the 60 ASCII bytes. batch 1 s, ips 33 / 11 = 3.000. */
    char unit[64];
    memset(unit, 'u', 60);
    memcpy(unit + 60, "\xc3\xa9z", 4);
    char want_info[128];
    snprintf(want_info, sizeof want_info, " batch_cost: 1.00000 s ips: 3.000 %s/s", unit);
    CHECK_STR_EQ(want_info, step_info(&t, unit));
    char want_line[128];
    snprintf(want_line, sizeof want_line, "Time Unit: s, IPS Unit: %.60s/s\n", unit);
    CHECK(strstr(summary(&t), want_line) != NULL);
}

/* The throughput rows, rendered after the table. */
static const char *throughput(const sp__timer *t, double tokens, double flops, double peak)
{
    static char text[2048];
    sp__buf b;
    sp__buf_init(&b);
    sp__timer_perf_throughput(t, tokens, flops, peak, &b);
    snprintf(text, sizeof text, "%s", sp__buf_cstr(&b));
    CHECK(!b.failed);
    sp__buf_fini(&b);
    return text;
}

static void test_timer_throughput_rows_only_when_given(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 10, 0, 100, 32);
    CHECK_STR_EQ("", throughput(&t, 128, 1e12, 100)); /* warm-up only */
    steps_ms(&t, &now, 2, 0, 100, 32);
    CHECK_STR_EQ("", throughput(&t, 0, 0, 0));
    CHECK_STR_EQ("", throughput(&t, 0, 0, 100)); /* a peak alone gives nothing */
    /* 320 samples/s x 128; 1e12 FLOPs / 0.1 s = 10 TFLOP/s; 10% of 100. */
    CHECK_STR_EQ("|     tokens/s    |   40960.00000   |   40960.00000   |   40960.00000   |\n"
                 "|     TFLOP/s     |     10.00000    |     10.00000    |     10.00000    |\n"
                 "|     MFU (%)     |     10.00000    |     10.00000    |     10.00000    |\n",
                 throughput(&t, 128, 1e12, 100));
    CHECK_STR_EQ("|     TFLOP/s     |     10.00000    |     10.00000    |     10.00000    |\n",
                 throughput(&t, 0, 1e12, 0));
}

static void test_timer_throughput_steps_mode_and_zero_time(void)
{
    sp__timer t;
    int64_t now = 0;
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 11, 0, 100, 32);
    steps_ms(&t, &now, 1, 0, 50, -1); /* no num_samples: no tokens/s row */
    /* Steps 11 (100 ms) and 12 (50 ms): 2e12 / 0.15 s; fastest 20, slowest 10. */
    CHECK_STR_EQ("|     TFLOP/s     |     13.33333    |     20.00000    |     10.00000    |\n"
                 "|     MFU (%)     |     13.33333    |     20.00000    |     10.00000    |\n",
                 throughput(&t, 128, 1e12, 100));
    sp__timer_start(&t, now);
    steps_ms(&t, &now, 12, 0, 0, 32);
    const char *s = throughput(&t, 1e12, 1e30, 1e-3);
    check_no_nan_inf(s);
    CHECK(strstr(s, "tokens/s") && strstr(s, "MFU"));
}

int main(void)
{
    RUN_TEST(test_timer_throughput_rows_only_when_given);
    RUN_TEST(test_timer_throughput_steps_mode_and_zero_time);
    RUN_TEST(test_timer_center15_lengths_0_to_16);
    RUN_TEST(test_timer_constant_12_steps);
    RUN_TEST(test_timer_varying_15_steps_uses_steps_11_to_15);
    RUN_TEST(test_timer_summary_needs_more_than_10_steps);
    RUN_TEST(test_timer_steps_mode_is_sticky_and_never_mixes_units);
    RUN_TEST(test_timer_step_info_windows_and_unit);
    RUN_TEST(test_timer_zero_reader_cost_ignored_ratio_line_optional);
    RUN_TEST(test_timer_dataset_switch_pauses_and_resumes);
    RUN_TEST(test_timer_zero_cost_steps_give_no_nan_or_inf);
    RUN_TEST(test_timer_start_resets_everything);
    RUN_TEST(test_timer_long_unit_cut_for_summary_only);
    return TEST_SUMMARY();
}
