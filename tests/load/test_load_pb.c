/* test_load_pb.c: the protobuf reader (load_pb.c) against files cut short.
 * A NodeTreesProto cut between two fields is a shorter valid message, so
 * stepprof's files carry a guard (nodetree.proto: stepprof_begin first,
 * stepprof_end last with the number of thread trees): every cut of one is
 * an error naming the file, never a result with threads missing. Paddle's
 * files have no guard and still load. */
#include "check.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/sp_load_pb_XXXXXX";
static char path[300], cut_path[300];

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

static void write_file(const char *file, const void *data, size_t size)
{
    FILE *f = fopen(file, "wb");
    CHECK(f != NULL);
    if (!f) return;
    if (size) CHECK(fwrite(data, 1, size, f) == size);
    fclose(f);
}

/* A result with three threads, made from a small JSON trace, saved as .pb. */
static void make_pb(void)
{
    char json[300];
    snprintf(json, sizeof json, "%s/three.json", dir);
    const char *text = "{\"traceEvents\":[\n"
                       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":11,\"ts\":10,\"dur\":5},\n"
                       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":11,\"ts\":11,\"dur\":2},\n"
                       "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"c\",\"pid\":1,\"tid\":12,\"ts\":10,"
                       "\"dur\":5},\n"
                       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"d\",\"pid\":1,\"tid\":13,\"ts\":20,\"dur\":5}\n"
                       "]}";
    write_file(json, text, strlen(text));
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(json, NULL, &r));
    if (!r) return;
    CHECK_EQ((size_t)3, sp_result_thread_count(r));
    CHECK_OK(sp_result_export_protobuf(r, path));
    sp_result_release(r);
    unlink(json);
}

static void test_load_pb_every_cut_is_an_error(void)
{
    snprintf(path, sizeof path, "%s/three.pb", dir);
    snprintf(cut_path, sizeof cut_path, "%s/cut.pb", dir);
    make_pb();
    size_t size = 0;
    unsigned char *data = read_all(path, &size);
    if (!data) return;
    sp_load_options o;
    sp_load_options_init(&o);
    o.format = SP_FORMAT_PROTOBUF;
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, &o, &r)); /* whole: loads */
    if (r) {
        CHECK_EQ((size_t)3, sp_result_thread_count(r));
        sp_result_release(r);
    }
    int loaded = 0;
    for (size_t cut = 0; cut < size; cut++) {
        write_file(cut_path, data, cut);
        r = NULL;
        sp_status s = sp_result_load(cut_path, &o, &r);
        if (s == SP_OK) {
            fprintf(stderr, "cut at %zu of %zu bytes loads\n", cut, size);
            loaded++;
            sp_result_release(r);
            continue;
        }
        CHECK_EQ(SP_EFORMAT, s);
        CHECK(strstr(sp_last_error(), cut_path) != NULL);
    }
    CHECK_EQ(0, loaded);
    /* Also by its magic-less sniffing (SP_FORMAT_AUTO), and the message says
     * what happened at a cut between thread trees. */
    free(data);
    unlink(cut_path);
    unlink(path);
}

static void test_load_pb_truncated_message(void)
{
    snprintf(path, sizeof path, "%s/three.pb", dir);
    snprintf(cut_path, sizeof cut_path, "%s/cut.pb", dir);
    make_pb();
    size_t size = 0;
    unsigned char *data = read_all(path, &size);
    if (!data) return;
    /* Without the end marker (its key and one-byte count): a clean cut
     * after the last thread tree. */
    write_file(cut_path, data, size - 3);
    sp_result *r = NULL;
    CHECK_EQ(SP_EFORMAT, sp_result_load(cut_path, NULL, &r));
    CHECK(strstr(sp_last_error(), "truncated") != NULL);
    CHECK(strstr(sp_last_error(), cut_path) != NULL);
    /* Data after the end marker is an error too. */
    unsigned char *more = malloc(size + 2);
    memcpy(more, data, size);
    more[size] = 0x08; /* field 1 (version), varint */
    more[size + 1] = 0x01;
    write_file(cut_path, more, size + 2);
    CHECK_EQ(SP_EFORMAT, sp_result_load(cut_path, NULL, &r));
    free(more);
    free(data);
    unlink(cut_path);
    unlink(path);
}

static void test_load_pb_paddle_file_without_guard(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(SP_SOURCE_DIR "/tests/data/paddle_cpu_tiny.paddle_trace.pb", NULL, &r));
    if (r) {
        CHECK_EQ((size_t)1, sp_result_thread_count(r));
        sp_result_release(r);
    }
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_load_pb_every_cut_is_an_error);
    RUN_TEST(test_load_pb_truncated_message);
    RUN_TEST(test_load_pb_paddle_file_without_guard);
    rmdir(dir);
    return TEST_SUMMARY();
}
