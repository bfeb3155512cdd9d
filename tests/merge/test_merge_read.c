/* test_merge_read.c: the merge's event reader (merge_read.c) and the
 * lexer's tee it copies events with (json_lex.c): microsecond text becomes
 * exact nanoseconds; pid, ts and id are located in the copied text whatever
 * the key order; GPU rows are told by category and by their process name;
 * a collective's args are read; the tee's copy is byte for byte the input,
 * across the lexer's 64 KiB refills. */
#include "check.h"
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_merge_read_us_to_ns(void)
{
    int64_t ns;
    CHECK_EQ(0, sp__merge_us_to_ns("4769061261474.954", &ns));
    CHECK(ns == 4769061261474954);
    CHECK_EQ(0, sp__merge_us_to_ns("12", &ns));
    CHECK(ns == 12000);
    CHECK_EQ(0, sp__merge_us_to_ns("1.5", &ns));
    CHECK(ns == 1500);
    CHECK_EQ(0, sp__merge_us_to_ns("1.0005", &ns)); /* rounded at the 4th digit */
    CHECK(ns == 1001);
    CHECK_EQ(0, sp__merge_us_to_ns("-2.25", &ns));
    CHECK(ns == -2250);
    CHECK_EQ(0, sp__merge_us_to_ns("1.5e3", &ns));
    CHECK(ns == 1500000);
    CHECK(sp__merge_us_to_ns("x", &ns) != 0);
}

static FILE *text_file(const char *text)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    fputs(text, f);
    rewind(f);
    return f;
}

static void test_merge_read_event_fields(void)
{
    const char *ev_text =
        "{\"args\":{\"seq\":3,\"Process Group Name\":\"0\",\"Collective name\":\"allreduce\","
        "\"Event Type\":\"Communication\"},\"ts\":10.500,\"id\":77,\"pid\":4242,"
        "\"ph\":\"X\",\"dur\":2.000,\"name\":\"gloo:all_reduce\"}";
    FILE *f = text_file(ev_text);
    sp__jlex lx;
    CHECK_OK(sp__jlex_open(&lx, f, "t.json"));
    sp__buf tee;
    sp__buf_init(&tee);
    sp__jlex_tee(&lx, &tee);
    mg_event ev;
    CHECK_EQ(0, sp__merge_read_event(&lx, &ev));
    sp__jlex_tee(&lx, NULL);
    CHECK_MEM_EQ(ev_text, strlen(ev_text), tee.data, tee.len);
    CHECK_EQ('X', ev.ph);
    CHECK_EQ(1, ev.comm);
    CHECK(ev.seq == 3 && ev.ts_ns == 10500 && ev.dur_ns == 2000 && ev.pid == 4242 && ev.id == 77);
    CHECK(ev.group == sp__merge_hash("0", 1) && ev.coll == sp__merge_hash("allreduce", 9));
    CHECK_MEM_EQ("10.500", 6, tee.data + ev.ts_at, ev.ts_end - ev.ts_at);
    CHECK_MEM_EQ("4242", 4, tee.data + ev.pid_at, ev.pid_end - ev.pid_at);
    CHECK_MEM_EQ("77", 2, tee.data + ev.id_at, ev.id_end - ev.id_at);
    sp__buf_fini(&tee);
    sp__jlex_close(&lx);
    fclose(f);
}

static void test_merge_read_gpu_rows(void)
{
    FILE *f = text_file(
        "[{\"ph\":\"M\",\"args\":{\"name\":\"GPU 1\"},\"name\":\"process_name\",\"pid\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"ts\":1},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":9,\"args\":{\"name\":\"GPU 2\"}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"GPU op\",\"pid\":\"Spans\",\"ts\":1}]");
    sp__jlex lx;
    CHECK_OK(sp__jlex_open(&lx, f, "t.json"));
    mg_event ev;
    CHECK_EQ(0, sp__jlex_expect(&lx, '['));
    CHECK_EQ(0, sp__merge_read_event(&lx, &ev));
    CHECK(ev.gpu_meta == 1 && ev.process_meta == 1 && ev.pid == 1);
    CHECK_EQ(1, sp__jlex_next(&lx, ']'));
    CHECK_EQ(0, sp__merge_read_event(&lx, &ev));
    CHECK(ev.gpu_cat == 1 && ev.pid_kind == 1);
    CHECK_EQ(1, sp__jlex_next(&lx, ']'));
    CHECK_EQ(0, sp__merge_read_event(&lx, &ev));
    CHECK_EQ(0, ev.gpu_meta); /* a thread named "GPU 2" is not a device row */
    CHECK_EQ(1, sp__jlex_next(&lx, ']'));
    CHECK_EQ(0, sp__merge_read_event(&lx, &ev));
    CHECK(ev.gpu_cat == 0 && ev.pid_kind == 2);
    sp__jlex_close(&lx);
    fclose(f);
}

static void test_merge_read_tee_across_refills(void)
{
    /* 200 events of about 1 KiB: the lexer refills its 64 KiB buffer
     * inside some of them */
    sp__buf in;
    sp__buf_init(&in);
    sp__buf_putc(&in, '[');
    for (int i = 0; i < 200; i++) {
        sp__buf_printf(&in, "%s{\"ph\":\"X\",\"name\":\"", i ? ",\n  " : "");
        for (int k = 0; k < 1000; k++)
            sp__buf_putc(&in, (char)('a' + (i + k) % 26));
        sp__buf_printf(&in, "\",\"ts\":%d.125,\"pid\":%d}", i, i);
    }
    sp__buf_putc(&in, ']');
    FILE *f = text_file(sp__buf_cstr(&in));
    sp__jlex lx;
    CHECK_OK(sp__jlex_open(&lx, f, "t.json"));
    CHECK_EQ(0, sp__jlex_expect(&lx, '['));
    sp__buf tee, expect;
    sp__buf_init(&tee);
    sp__buf_init(&expect);
    for (int i = 0; i < 200; i++) {
        sp__jlex_peek(&lx);
        tee.len = 0;
        sp__jlex_tee(&lx, &tee);
        mg_event ev;
        CHECK_EQ(0, sp__merge_read_event(&lx, &ev));
        sp__jlex_tee(&lx, NULL);
        expect.len = 0;
        sp__buf_printf(&expect, "%d.125", i);
        CHECK_MEM_EQ(expect.data, expect.len, tee.data + ev.ts_at, ev.ts_end - ev.ts_at);
        CHECK(tee.data[0] == '{' && tee.data[tee.len - 1] == '}' && tee.len > 1000);
        CHECK_EQ(i < 199, sp__jlex_next(&lx, ']'));
    }
    sp__buf_fini(&tee);
    sp__buf_fini(&expect);
    sp__buf_fini(&in);
    sp__jlex_close(&lx);
    fclose(f);
}

/* The fast path (merge_scan.c) reads what the lexer path reads, field for
 * field, and gives up, consuming nothing, on what it does not know. */
static void test_merge_read_fast_path_agrees(void)
{
    static const char *const events[] = {
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"gloo:all_reduce\",\"pid\":7,\"tid\":7,\"ts\":"
        "1.5,"
        "\"dur\":2.000,\"args\":{\"External id\":3,\"Collective name\":\"allreduce\","
        "\"Process Group Name\":\"0\",\"Group size\":4,\"bytes\":4096,\"seq\":9,\"Event "
        "Type\":\"Communication\"}}",
        "{ \"ph\" : \"M\" , \"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"GPU 0\"} }",
        "{\"ph\":\"M\",\"args\":{\"labels\":\"GPU 1\"},\"name\":\"process_labels\",\"pid\":1}",
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":\"Spans\",\"ts\":1e3,\"id\":-4,\"args\":{"
        "\"grid\":[1,[2,{}],3],"
        "\"x\":null,\"y\":true,\"z\":false,\"Process Group Name\":12,\"seq\":-1}}",
        "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window "
        "End\",\"pid\":\"\",\"tid\":\"\",\"ts\":5.000}",
        "{\"pid\":1.5,\"ts\":\"x\",\"args\":[],\"args\":{\"Event Type\":\"Communication\"}}",
        "{}",
        "{\"ph\":\"X\",\"name\":\"a name long enough for the eight-byte scan, \u00e9 no: plain "
        "text\",\"ts\":0.001}",
    };
    for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
        const char *t = events[i];
        mg_event fast, slow;
        size_t n = sp__merge_scan_event((const unsigned char *)t,
                                        (const unsigned char *)t + strlen(t) + 1, &fast);
        CHECK_EQ((int)strlen(t), (int)n);
        FILE *f = text_file(t);
        sp__jlex lx;
        CHECK_OK(sp__jlex_open(&lx, f, "t.json"));
        sp__buf tee;
        sp__buf_init(&tee);
        sp__jlex_tee(&lx, &tee);
        CHECK_EQ(0, sp__merge_read_event(&lx, &slow));
        sp__jlex_tee(&lx, NULL);
        if (memcmp(&fast, &slow, sizeof fast) != 0) fprintf(stderr, "differs: %s\n", t);
        CHECK(memcmp(&fast, &slow, sizeof fast) == 0);
        sp__buf_fini(&tee);
        sp__jlex_close(&lx);
        fclose(f);
    }
    /* given up: an escape, the buffer's end, a bad number, a bad literal */
    static const char *const unsure[] = {
        "{\"name\":\"a\\\"b\"}",
        "{\"ph\":\"X\"",
        "{\"ts\":1.}",
        "{\"x\":tru}",
        "{\"ts\":12",
        "{\"name\":\"a name long enough for the eight-byte scan\\n\"}",
        "{\"name\":\"a name long enough for the eight-byte scan\x01\"}"};
    for (size_t i = 0; i < sizeof unsure / sizeof *unsure; i++) {
        mg_event ev;
        const unsigned char *u = (const unsigned char *)unsure[i];
        CHECK_EQ(0, (int)sp__merge_scan_event(u, u + strlen(unsure[i]), &ev));
    }
}

int main(void)
{
    RUN_TEST(test_merge_read_fast_path_agrees);
    RUN_TEST(test_merge_read_us_to_ns);
    RUN_TEST(test_merge_read_event_fields);
    RUN_TEST(test_merge_read_gpu_rows);
    RUN_TEST(test_merge_read_tee_across_refills);
    return TEST_SUMMARY();
}
