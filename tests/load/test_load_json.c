/* test_load_json.c: the Chrome-trace JSON reader (load_json.c, json_lex.c)
 * on input that is not stepprof's own: paddle's JSON dialect loads with its
 * event types; events with a pid, tid, ts or dur of the wrong type and bytes
 * after a gzip stream are counted (load_skipped, trailing_bytes), never
 * dropped in silence; a gzip bomb of one huge name loads in bounded memory,
 * the name cut and counted (names_cut). Times keep their exact nanoseconds
 * in every spelling, escaped keys match as plain ones do, and tokens cut by
 * the end of a read (64 KiB) load as whole ones. */
#include "check.h"
#include "collect.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

static char dir[] = "/tmp/sp_load_json_XXXXXX";
static char path[300];

static void write_text(const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The event of thread t named name, or type SP_EVENT_TYPE_COUNT. */
static sp_event_info find(const sp_result *r, size_t t, const char *name)
{
    sp_thread_info ti;
    sp_event_info e;
    memset(&e, 0, sizeof e);
    e.type = SP_EVENT_TYPE_COUNT;
    if (sp_result_thread(r, t, &ti) != SP_OK) return e;
    for (size_t i = 0; i < ti.event_count; i++) {
        sp_event_info x;
        if (sp_result_event(r, t, i, &x) == SP_OK && strcmp(x.name, name) == 0) return x;
    }
    return e;
}

static void test_load_json_paddle_dialect(void)
{
    sp_result *r = NULL;
    const char *file = SP_SOURCE_DIR "/tests/data/paddle_dialect.paddle_trace.json";
    CHECK_OK(sp_result_load(file, NULL, &r));
    if (!r) return;
    /* Thread 6689 with the host ranges; 6690 holds only the CudaRuntime
     * call, which launched the kernel (correlation 7) on device 0, stream 7. */
    CHECK_EQ((size_t)2, sp_result_thread_count(r));
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    CHECK_U64_EQ(6689, ti.tid);
    CHECK_EQ((size_t)7, ti.event_count);
    CHECK_OK(sp_result_thread(r, 1, &ti));
    CHECK_U64_EQ(6690, ti.tid);
    CHECK_EQ((size_t)0, ti.event_count);
    CHECK_EQ((size_t)1, r->threads[1].runtime_count);
    CHECK_EQ((size_t)1, r->device_count);
    if (r->threads[1].runtime_count == 1 && r->device_count == 1) {
        const sp__runtime *rt = &r->threads[1].runtimes[0];
        const sp__device_rec *d = &r->devices[0];
        CHECK_EQ(7u, rt->correlation);
        CHECK(rt->end_ns - rt->start_ns == 5000);
        CHECK_EQ((int)SP_EVENT_KERNEL, (int)d->type);
        CHECK_EQ(0u, d->device);
        CHECK_EQ(7u, d->stream);
        CHECK_EQ(1u, d->context);
        CHECK_EQ(7u, d->correlation);
        CHECK_EQ(1, d->thread); /* attributed to the call */
        CHECK(d->end_ns - d->start_ns == 20000);
    }
    CHECK_EQ(3u, sp_result_span_index(r));
    static const struct {
        const char *name;
        sp_event_type type;
        uint32_t depth;
    } want[] = {
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, 0},
        {"DataLoader", SP_EVENT_DATALOADER, 1},
        {"Forward", SP_EVENT_FORWARD, 1},
        {"linear dygraph", SP_EVENT_OPERATOR, 2},
        {"linear compute", SP_EVENT_OPERATOR_INNER, 3},
        {"Backward", SP_EVENT_BACKWARD, 1},
        {"my_block", SP_EVENT_PYTHON_USER_DEFINED, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        sp_event_info e = find(r, 0, want[i].name);
        if (e.type != want[i].type) fprintf(stderr, "event %s\n", want[i].name);
        CHECK_EQ((int)want[i].type, (int)e.type);
        CHECK_EQ(want[i].depth, e.depth);
    }
    sp_event_info step = find(r, 0, "ProfileStep#1");
    CHECK(step.end_ns - step.start_ns == 2500000);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_LOAD_SKIPPED));
    /* The tables take it: the Model Summary sees the step. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    CHECK_OK(sp_result_summary(r, NULL, mem));
    fclose(mem);
    CHECK(text && strstr(text, "ProfileStep") != NULL);
    CHECK(text && strstr(text, "linear dygraph") != NULL);
    free(text);
    sp_result_release(r);
}

static void test_load_json_wrong_types_counted(void)
{
    snprintf(path, sizeof path, "%s/types.json", dir);
    write_text("{\"traceEvents\":[\n"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"good\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5},\n"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ts_str\",\"pid\":1,\"tid\":2,\"ts\":\"10\",\"dur\":5},\n"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"tid_obj\",\"pid\":1,\"tid\":{},\"ts\":10,\"dur\":5},\n"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"tid_word\",\"pid\":1,\"tid\":\"main\",\"ts\":10,\"dur\":5},\n"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"pid_arr\",\"pid\":[1],\"tid\":2,\"ts\":10,\"dur\":5},\n"
               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"dur_bool\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":true},\n"
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gpu\",\"pid\":\"x\",\"tid\":\"y\",\"ts\":10,\"dur\":5}\n"
               "]}");
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    CHECK_EQ((size_t)1, sp_result_thread_count(r));
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    CHECK_EQ((size_t)1, ti.event_count);
    /* Five host events skipped, and the kernel: GPU records are restored, so
     * one with a string pid and tid is counted as well. */
    CHECK_U64_EQ(6, sp_result_counter(r, SP_COUNTER_LOAD_SKIPPED));
    sp_result_release(r);
    unlink(path);
}

/* Writes text gzip-compressed as one member, then extra bytes raw. */
static void write_gz(FILE *f, const char *text)
{
    size_t n = strlen(text);
    uLongf cap = compressBound((uLong)n) + 64;
    unsigned char *out = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK_EQ(Z_OK, deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY));
    z.next_in = (unsigned char *)text;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    CHECK_EQ(Z_STREAM_END, deflate(&z, Z_FINISH));
    CHECK(fwrite(out, 1, cap - z.avail_out, f) == cap - z.avail_out);
    deflateEnd(&z);
    free(out);
}

static const char small_trace[] =
    "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5}]}";

static void test_load_json_gzip_trailing_counted(void)
{
    snprintf(path, sizeof path, "%s/t.json.gz", dir);
    FILE *f = fopen(path, "wb");
    write_gz(f, small_trace);
    fputs("garbage!!", f);
    fclose(f);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (r) {
        CHECK_U64_EQ(9, sp_result_counter(r, SP_COUNTER_TRAILING_BYTES));
        sp_result_release(r);
    }
    /* Two members are one stream (gzip allows it): nothing trails. */
    f = fopen(path, "wb");
    write_gz(f, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",");
    write_gz(f, "\"name\":\"op\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5}]}");
    fclose(f);
    r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (r) {
        CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_TRAILING_BYTES));
        CHECK_EQ((size_t)1, sp_result_thread_count(r));
        sp_result_release(r);
    }
    unlink(path);
}

/* A gzip file of {"traceEvents":[{... "name":"AAAA..." ...}]} whose name is
 * name_bytes long, written as a stream (never held in memory). */
static void write_bomb(size_t name_bytes)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    gzFile gz = gzdopen(dup(fileno(f)), "wb1");
    gzputs(gz, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":1,\"name\":\"");
    static char chunk[1 << 16];
    memset(chunk, 'A', sizeof chunk);
    for (size_t done = 0; done < name_bytes; done += sizeof chunk) gzwrite(gz, chunk, sizeof chunk);
    gzputs(gz, "\"}]}");
    gzclose(gz);
    fclose(f);
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void test_load_json_huge_name_bounded(void)
{
    snprintf(path, sizeof path, "%s/bomb.json.gz", dir);
    const size_t name_bytes = (size_t)256 << 20;
    write_bomb(name_bytes);
    long before = peak_rss_kb();
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    long grown_kb = peak_rss_kb() - before;
    /* Without the cap the name alone took 256 MiB (and its buffer's
     * doubling more). */
    if (grown_kb >= 64 * 1024) fprintf(stderr, "peak RSS grew by %ld KiB\n", grown_kb);
    CHECK(grown_kb < 64 * 1024);
    if (r) {
        sp_event_info e;
        CHECK_OK(sp_result_event(r, 0, 0, &e));
        CHECK_EQ((size_t)4096, strlen(e.name));
        CHECK(sp_result_counter(r, SP_COUNTER_NAMES_CUT) >= 1);
        sp_result_release(r);
    }
    unlink(path);
}

static void test_load_json_number_spellings_exact(void)
{
    snprintf(path, sizeof path, "%s/numbers.json", dir);
    /* ts in us: integer, 1-4 decimals (the 4th cut), exponent, 13 and 16
     * integer digits; the keys of "esc" spelled with escapes; fractions
     * where integers belong (a tid, the first arg) and counter values. */
    write_text(
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"int\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":5}"
        ",\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"dec1\",\"pid\":1,\"tid\":2,\"ts\":20.5,"
        "\"dur\":0.25},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"dec4\",\"pid\":1,\"tid\":2,\"ts\":30.1239,"
        "\"dur\":0.0019},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"exp\",\"pid\":1,\"tid\":2,\"ts\":4e1,\"dur\":"
        "1E0},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"big\",\"pid\":1,\"tid\":3,"
        "\"ts\":1234567890123.456,\"dur\":1.001},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"huge\",\"pid\":1,\"tid\":4,"
        "\"ts\":1234567890123456,\"dur\":2},\n"
        "{\"p\\u0068\":\"X\",\"c\\u0061t\":\"cpu_op\",\"name\":\"esc\",\"pid\":1,\"tid\":2,"
        "\"t\\u0073\":50,\"dur\":1},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"frac\",\"pid\":1,\"tid\":2.4,\"ts\":60,"
        "\"dur\":1,"
        "\"args\":{\"External id\":7.5,\"Event Type\":\"Operator\"}},\n"
        "{\"ph\":\"C\",\"name\":\"cnt\",\"pid\":1,\"tid\":2,\"ts\":70,\"args\":{\"value\":2.5}},\n"
        "{\"ph\":\"C\",\"name\":\"cnt_int\",\"pid\":1,\"tid\":2,\"ts\":80,\"args\":{\"value\":-3}}"
        "\n"
        "]}");
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    static const struct {
        size_t thread;
        const char *name;
        int64_t start_ns, end_ns;
    } want[] = {{0, "int", 10000, 15000},
                {0, "dec1", 20500, 20750},
                {0, "dec4", 30123, 30124},
                {0, "exp", 40000, 41000},
                {0, "esc", 50000, 51000},
                {0, "frac", 60000, 61000},
                {1, "big", 1234567890123456, 1234567890124457},
                {2, "huge", 1234567890123456000LL, 0}};
    CHECK_EQ((size_t)3, sp_result_thread_count(r));
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        sp_event_info e = find(r, want[i].thread, want[i].name);
        CHECK_EQ(SP_EVENT_OPERATOR, e.type);
        if (want[i].end_ns) {
            CHECK_EQ(want[i].start_ns, e.start_ns);
            CHECK_EQ(want[i].end_ns, e.end_ns);
        } else { /* past 15 digits: through a double, to its precision */
            CHECK(llabs(e.start_ns - want[i].start_ns) < 4096);
            CHECK_EQ(2000, e.end_ns - e.start_ns);
        }
    }
    sp_event_info cnt = find(r, 0, "cnt"), cnt_int = find(r, 0, "cnt_int");
    CHECK(cnt.flags & SP_EVENT_FLAG_COUNTER);
    CHECK(cnt.value == 2.5);
    CHECK(cnt_int.value == -3.0);
    CHECK_EQ(80000, cnt_int.start_ns);
    sp_result_release(r);
    unlink(path);
}

/* Events enough to fill several reads, each a different length, so that
 * keys, names and numbers fall across the end of a read at many offsets. */
static void test_load_json_tokens_across_reads(void)
{
    enum { N = 4000 };
    snprintf(path, sizeof path, "%s/many.json", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"traceEvents\":[\n", f);
    for (int i = 0; i < N; i++)
        fprintf(f,
                "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d_%.*s\",\"pid\":1,\"tid\":2,"
                "\"ts\":%d.%03d,\"dur\":%d.%03d,\"args\":{\"External id\":%d,\"Event "
                "Type\":\"Operator\"}}%s\n",
                i, i % 37, "abcdefghijklmnopqrstuvwxyzabcdefghijk", 1000 + i * 10, i % 1000, 5,
                (i * 7) % 1000, i, i + 1 < N ? "," : "");
    fputs("]}\n", f);
    fclose(f);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    CHECK_EQ((size_t)N, ti.event_count);
    int bad = 0;
    for (size_t i = 0; i < ti.event_count && i < N; i++) {
        sp_event_info e;
        char name[64];
        CHECK_OK(sp_result_event(r, 0, i, &e));
        snprintf(name, sizeof name, "op%zu_%.*s", i, (int)(i % 37),
                 "abcdefghijklmnopqrstuvwxyzabcdefghijk");
        int64_t start = (int64_t)(1000 + i * 10) * 1000 + (int64_t)(i % 1000);
        int64_t end = start + 5000 + (int64_t)((i * 7) % 1000);
        if (strcmp(e.name, name) != 0 || e.start_ns != start || e.end_ns != end ||
            e.type != SP_EVENT_OPERATOR)
            bad++;
    }
    CHECK_EQ(0, bad);
    sp_result_release(r);
    unlink(path);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_load_json_paddle_dialect);
    RUN_TEST(test_load_json_wrong_types_counted);
    RUN_TEST(test_load_json_gzip_trailing_counted);
    RUN_TEST(test_load_json_huge_name_bounded);
    RUN_TEST(test_load_json_number_spellings_exact);
    RUN_TEST(test_load_json_tokens_across_reads);
    rmdir(dir);
    return TEST_SUMMARY();
}
