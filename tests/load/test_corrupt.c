/* test_corrupt.c: corrupt saved results give a clear error, never a crash,
 * a hang or a leak (this test also runs under ASan+UBSan). Each input is
 * cut at every byte, has bits flipped (every byte once, then random flips
 * from a fixed seed), and hand-made hostile files are tried: wrong magic,
 * lengths far past the end, deep nesting, corrupt gzip. Every failure must
 * be SP_EFORMAT with a message naming the file. tests/fuzz/ explores the
 * same loaders with libFuzzer. */
#include "check.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[] = "/tmp/sp_corrupt_XXXXXX";
static char path[300];

static unsigned char *read_all(const char *file, size_t *size)
{
    FILE *f = fopen(file, "rb");
    CHECK(f != NULL);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n + 1);
    CHECK(fread(data, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

static void write_file(const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    if (size) CHECK(fwrite(data, 1, size, f) == size);
    fclose(f);
}

/* Loads path as format; returns the status after checking that a failure
 * is a format error naming the file. */
static int try_load(sp_format format)
{
    sp_load_options o;
    sp_load_options_init(&o);
    o.format = format;
    sp_result *r = NULL;
    sp_status s = sp_result_load(path, &o, &r);
    if (s == SP_OK) {
        CHECK(r != NULL);
        /* A result that loads is a result: the tables take it. */
        FILE *devnull = fopen("/dev/null", "w");
        CHECK_OK(sp_result_summary(r, NULL, devnull));
        fclose(devnull);
        sp_result_release(r);
    } else {
        CHECK(r == NULL);
        if (s != SP_EFORMAT) fprintf(stderr, "status %d: %s\n", s, sp_last_error());
        CHECK_EQ(SP_EFORMAT, s);
        CHECK(strstr(sp_last_error(), path) != NULL);
    }
    return s;
}

static void torture(const unsigned char *data, size_t size, sp_format format, int cuts_must_fail)
{
    unsigned char *copy = malloc(size + 1);
    int ok_cuts = 0;
    for (size_t cut = 0; cut < size; cut++) {
        write_file(data, cut);
        if (try_load(format) == SP_OK) ok_cuts++;
    }
    if (cuts_must_fail) CHECK_EQ(0, ok_cuts);
    for (size_t i = 0; i < size; i++) {
        memcpy(copy, data, size);
        copy[i] ^= (unsigned char)(1u << (i % 8));
        write_file(copy, size);
        try_load(format);
    }
    srand(12345);
    for (int k = 0; k < 300; k++) {
        memcpy(copy, data, size);
        for (int j = 0; j < 4; j++) copy[(size_t)rand() % size] ^= (unsigned char)(1u << (rand() % 8));
        write_file(copy, size);
        try_load(format);
    }
    free(copy);
}

static void test_corrupt_paddle_pb(void)
{
    size_t size;
    unsigned char *data = read_all(SP_SOURCE_DIR "/tests/data/paddle_cpu_tiny.paddle_trace.pb", &size);
    if (!data) return;
    /* A protobuf cut between fields is a shorter valid message, so some cuts load. */
    torture(data, size, SP_FORMAT_PROTOBUF, 0);
    free(data);
}

static void test_corrupt_json(void)
{
    static const char json[] =
        "{\"schemaVersion\":1,\"deviceProperties\":[],\"span_indx\":2,"
        "\"ExtraInfo\":{\"System Cpu Utilization\":\"0.5\",\"7\":\"main\"},"
        "\"stepprof_counters\":{\"host_dropped\":1,\"misuse\":2},"
        "\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":1000000000,\"traceEvents\":[\n"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":5,\"tid\":0,\"ts\":1.000,\"args\":{\"name\":\"p\\u00e9\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":5,\"tid\":7,\"ts\":1.000,"
        "\"dur\":9.500,\"args\":{\"External id\":1,\"Event Type\":\"ProfileStep\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"mat\\\"mul\\ud83d\\ude00\",\"pid\":5,\"tid\":7,\"ts\":2.250,"
        "\"dur\":1.000,\"args\":{\"External id\":2,\"Event Type\":\"Operator\"}},\n"
        "{\"ph\":\"C\",\"name\":\"q\",\"pid\":5,\"tid\":7,\"ts\":3.000,\"args\":{\"q\":1.5e0}},\n"
        "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":5,\"tid\":7,"
        "\"ts\":4.000,\"args\":{\"Addr\":1,\"Bytes\":-8,\"Total Allocated\":0,\"Total Reserved\":8,"
        "\"Device Id\":-1,\"Device Type\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
        "\"tid\":\"PyTorch Profiler\",\"ts\":0.500,\"dur\":20.000,\"args\":{\"Op count\":0}},\n"
        "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":\"\",\"tid\":\"\",\"ts\":20.500}],"
        "\"traceName\":\"x\",\"extra\":[true,false,null,{\"a\":[1,-2.5e-3]}]}";
    write_file(json, sizeof json - 1);
    CHECK_EQ(SP_OK, try_load(SP_FORMAT_AUTO));
    torture((const unsigned char *)json, sizeof json - 1, SP_FORMAT_JSON, 1);
}

static void test_corrupt_gzip(void)
{
    static const char json[] = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,"
                               "\"tid\":1,\"ts\":1.000,\"dur\":1.000}]}";
    snprintf(path, sizeof path, "%s/t.json.gz", dir);
    gzFile gz = gzopen(path, "wb");
    gzwrite(gz, json, sizeof json - 1);
    gzclose(gz);
    CHECK_EQ(SP_OK, try_load(SP_FORMAT_AUTO));
    size_t size;
    unsigned char *data = read_all(path, &size);
    if (data) torture(data, size, SP_FORMAT_JSON_GZ, 1);
    free(data);
    snprintf(path, sizeof path, "%s/input", dir);
}

/* A file in no format the loader reads is told as such, with the formats
 * it reads; text goes through the protobuf reader first (any byte that can
 * key a protobuf field could begin a .pb), binary that cannot begin a
 * protobuf message does not. The same bytes read as protobuf when asked for
 * keep the protobuf reader's message. */
static void test_corrupt_unrecognised_format(void)
{
    static const char formats[] =
        "stepprof reads Chrome-trace JSON (.json, starting with '{' or '['), gzip-compressed JSON "
        "(.json.gz), "
        "paddle's protobuf NodeTreesProto (.pb), the Perfetto traces stepprof writes (.pftrace) "
        "and stepprof's crash and stream dumps (.spdump)";
    char want[1200];
    write_file("hello world\nsecond line\n", 24);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    snprintf(want, sizeof want,
             "%s: unrecognised format (the file begins with \"hello world\", which is not how a "
             "trace begins): %s",
             path, formats);
    CHECK_STR_EQ(want, sp_last_error());
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_PROTOBUF));
    CHECK(strstr(sp_last_error(), ": not a valid protobuf trace: ") != NULL);
    /* UTF-8 text, cut to its first 24 bytes on a character's boundary. */
    write_file("d\xc3\xa9j\xc3\xa0 vu, un fichiers \xc3\xa9"
               "crit \xc3\xa0 la main",
               40);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    CHECK(strstr(sp_last_error(),
                 "(the file begins with \"d\xc3\xa9j\xc3\xa0 vu, un fichiers \",") != NULL);
    /* Wire type 7 in the first byte: no protobuf message starts so. */
    write_file("\x7f"
               "ELF\x02\x01\x01\x00\x00\x00",
               10);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    snprintf(want, sizeof want,
             "%s: unrecognised format (the file begins with bytes 7f 45 4c 46 02 01 01 00, which "
             "is not how a trace "
             "begins): %s",
             path, formats);
    CHECK_STR_EQ(want, sp_last_error());
    /* Field number 0. */
    write_file("\x00\x01", 2);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    CHECK(strstr(sp_last_error(), "unrecognised format (the file begins with bytes 00 01,") !=
          NULL);
    /* Binary that can begin a .pb keeps the protobuf reader's message. */
    static const unsigned char node[] = {0x1a, 0x04, 0x12, 0x7f, 0x08, 0x01};
    write_file(node, sizeof node);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    CHECK(strstr(sp_last_error(), ": not a valid protobuf trace: ") != NULL);
}

static void test_corrupt_hostile_files(void)
{
    /* Wrong magic and junk. */
    write_file("PK\x03\x04junk", 8);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    write_file("\x1f\x8bnot gzip at all", 17);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    CHECK(strstr(sp_last_error(),
                 ": not a valid gzip file: the data is corrupt (zlib: unknown compression "
                 "method, at compressed byte 4); compress the trace again or use an uncorrupted "
                 "copy") != NULL);
    /* Field 3 claiming 2^62 bytes; a varint of 11 bytes; wire type 3. */
    static const unsigned char huge[] = {0x1a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x08};
    write_file(huge, sizeof huge);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_PROTOBUF));
    CHECK(strstr(sp_last_error(), "length runs past the end") != NULL);
    static const unsigned char long_varint[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    write_file(long_varint, sizeof long_varint);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_PROTOBUF));
    static const unsigned char group[] = {0x0b, 0x0c};
    write_file(group, sizeof group);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_PROTOBUF));
    /* A host node claiming more bytes than its thread tree holds. */
    static const unsigned char node[] = {0x1a, 0x04, 0x12, 0x7f, 0x08, 0x01};
    write_file(node, sizeof node);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_PROTOBUF));
    /* Deep nesting, in an unknown key and as the event list. */
    size_t depth = 200000;
    char *deep = malloc(2 * depth + 64);
    size_t n = (size_t)sprintf(deep, "{\"x\":");
    memset(deep + n, '[', depth);
    n += depth;
    memset(deep + n, ']', depth);
    n += depth;
    n += (size_t)sprintf(deep + n, ",\"traceEvents\":[]}");
    write_file(deep, n);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    CHECK(strstr(sp_last_error(), "nesting too deep") != NULL);
    memset(deep, '[', depth);
    write_file(deep, depth);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    free(deep);
    /* A string that never ends, a huge number. */
    write_file("{\"traceEvents\":[{\"name\":\"aaaa", 29);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    char num[1200] = "{\"span_indx\":";
    memset(num + 13, '9', 1000);
    strcpy(num + 1013, ",\"traceEvents\":[]}");
    write_file(num, strlen(num));
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    write_file("{\"traceEvents\":[]} trailing", 27);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
    write_file("{\"no events\":1}", 15);
    CHECK_EQ(SP_EFORMAT, try_load(SP_FORMAT_AUTO));
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/input", dir);
    RUN_TEST(test_corrupt_paddle_pb);
    RUN_TEST(test_corrupt_json);
    RUN_TEST(test_corrupt_gzip);
    RUN_TEST(test_corrupt_unrecognised_format);
    RUN_TEST(test_corrupt_hostile_files);
    unlink(path);
    snprintf(path, sizeof path, "%s/t.json.gz", dir);
    unlink(path);
    rmdir(dir);
    return TEST_SUMMARY();
}
