/* test_load_pftrace.c: the .pftrace reader (load_pftrace.c) with the writer
 * (src/export/perfetto.c): names of any bytes and length come back as they
 * went in (or as the JSON gives them back, for the spellings the two
 * share), an empty result loads, and truncated, corrupted or foreign input
 * is refused with a message, never read out of bounds (the ASan build runs
 * this too). */
#include "fixture.h"
#include "load.h"
#include "perfetto.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define US 1000ll
#define T0 1795000000000000000ll

static char dir[] = "/tmp/sp_pftrace_XXXXXX";

static char *path_of(const char *name)
{
    static char path[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(path[i], sizeof path[i], "%s/%s", dir, name);
    return path[i];
}

static char *huge_name(void)
{
    size_t n = (size_t)3 << 20;
    char *s = malloc(n + 1);
    CHECK(s != NULL);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) s[i] = (char)('a' + i % 26);
    s[n] = '\0';
    return s;
}

/* One thread with ranges of odd names, and the usual shapes around them. */
static sp_result *odd_result(const char *huge)
{
    sp_result *r = sp__result_new();
    r->span_start_ns = T0;
    r->span_end_ns = T0 + 100 * US;
    r->meta.pid = 77;
    const fixture_range ranges[] = {
        {"ProfileStep#3", SP_EVENT_PROFILE_STEP, T0, T0 + 90 * US},
        {"quote \" backslash \\ newline \n tab \t", SP_EVENT_USER_DEFINED, T0 + 1 * US, T0 + 10 * US},
        {"invalid \xff\xfe utf-8 \xc3\x28", SP_EVENT_OPERATOR, T0 + 2 * US, T0 + 3 * US},
        {"next_batch", SP_EVENT_DATALOADER, T0 + 11 * US, T0 + 12 * US},
        {"ProfilerStep#9", SP_EVENT_USER_DEFINED, T0 + 13 * US, T0 + 14 * US},
        {huge ? huge : "h", SP_EVENT_OPERATOR, T0 + 20 * US, T0 + 30 * US},
        {"", SP_EVENT_OPERATOR, T0 + 31 * US, T0 + 31 * US},
    };
    fixture_add_thread(r, 9, "worker \"9\"", ranges, sizeof ranges / sizeof *ranges);
    /* The invalid bytes as the names table keeps them (repaired). */
    sp__thread *t = &r->threads[0];
    t->events[2].name = sp__names_from_bytes(&r->names, "invalid \xff\xfe utf-8 \xc3\x28", 19);
    t->events[5].name = huge ? sp__names_from_bytes(&r->names, huge, strlen(huge)) : t->events[5].name;
    return r;
}

static sp_result *load(const char *path)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    return r;
}

/* Every event of thread 0 as "name|type|start|end" lines. */
static char *events_text(const sp_result *r)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    fprintf(f, "thread %llu %s\n", (unsigned long long)ti.tid, ti.name);
    for (size_t i = 0; i < ti.event_count; i++) {
        sp_event_info e;
        CHECK_OK(sp_result_event(r, 0, i, &e));
        fprintf(f, "%s|%d|%lld|%lld|%lld\n", e.name, (int)e.type, (long long)e.start_ns,
                (long long)e.end_ns, (long long)e.parent);
    }
    fclose(f);
    return text;
}

static void test_load_pftrace_odd_names_as_json(void)
{
    char *huge = huge_name();
    sp_result *live = odd_result(huge);
    const char *pf = path_of("odd.pftrace"), *json = path_of("odd.json");
    CHECK_OK(sp_result_export(live, pf, SP_FORMAT_AUTO));
    CHECK_OK(sp_result_export(live, json, SP_FORMAT_JSON));
    sp_result *a = load(pf), *b = load(json);
    if (a && b) {
        char *ta = events_text(a), *tb = events_text(b), *tl = events_text(live);
        CHECK_STR_EQ(tb, ta);
        /* The spellings undone (steps, data loader) come back as recorded;
         * a reserved name keeps its "user:" as from the JSON. */
        CHECK(strstr(ta, "ProfileStep#3|") != NULL);
        CHECK(strstr(ta, "\nnext_batch|") != NULL);
        CHECK(strstr(ta, "\nuser:ProfilerStep#9|") != NULL);
        CHECK(strstr(ta, "quote \" backslash \\ newline \n tab \t|") != NULL);
        /* The huge name, as long as the names table keeps it. */
        sp_event_info ea, el;
        CHECK_OK(sp_result_event(a, 0, 5, &ea));
        CHECK_OK(sp_result_event(live, 0, 5, &el));
        CHECK_STR_EQ(el.name, ea.name);
        CHECK(strlen(ea.name) >= 4096);
        CHECK(strstr(tl, "thread 9 worker \"9\"") != NULL && strstr(ta, "thread 9 worker \"9\"") != NULL);
        free(ta);
        free(tb);
        free(tl);
    }
    sp_result_release(a);
    sp_result_release(b);
    sp_result_release(live);
    free(huge);
}

static void test_load_pftrace_empty_result(void)
{
    sp_result *live = sp__result_new();
    const char *pf = path_of("empty.pftrace");
    CHECK_OK(sp_result_export(live, pf, SP_FORMAT_PERFETTO));
    sp_result *a = load(pf);
    if (a) CHECK_EQ((size_t)0, sp_result_thread_count(a));
    sp_result_release(a);
    sp_result_release(live);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)size + 1);
    CHECK(data != NULL && fread(data, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return data;
}

static void spill(const char *path, const unsigned char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ(n, fwrite(data, 1, n, f));
    fclose(f);
}

/* Loads a damaged copy: it may load (a cut at a packet's end can leave a
 * readable trace) or be refused with a message naming the file, nothing
 * else. */
static int load_damaged(const char *path)
{
    sp_result *r = NULL;
    sp_status s = sp_result_load(path, NULL, &r);
    if (s == SP_OK) {
        sp_result_release(r);
        return 0;
    }
    CHECK(s == SP_EFORMAT);
    CHECK(strstr(sp_last_error(), path) != NULL);
    return 1;
}

static sp_result *small_result(void)
{
    sp_result *r = sp__result_new();
    r->span_start_ns = T0;
    r->span_end_ns = T0 + 100 * US;
    const fixture_range ranges[] = {
        {"step", SP_EVENT_PROFILE_STEP, T0, T0 + 90 * US},
        {"op", SP_EVENT_OPERATOR, T0 + 1 * US, T0 + 10 * US},
        {"inner", SP_EVENT_OPERATOR_INNER, T0 + 2 * US, T0 + 3 * US},
        {"op", SP_EVENT_OPERATOR, T0 + 11 * US, T0 + 20 * US},
    };
    fixture_add_thread(r, 5, "main", ranges, 4);
    fixture_add_mem(r, &r->threads[0], T0 + 4 * US, SP_MEM_ALLOCATE, "Place(gpu:0)", 0x10, 64, 64, 128, 64, 128);
    fixture_add_runtime(r, &r->threads[0], "cudaLaunchKernel", T0 + 5 * US, T0 + 6 * US, 3);
    fixture_add_device(r, "k", SP_EVENT_KERNEL, T0 + 7 * US, T0 + 9 * US, 0, 7, 3);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static void test_load_pftrace_truncated_and_corrupt(void)
{
    sp_result *live = small_result();
    const char *pf = path_of("small.pftrace"), *bad = path_of("bad.pftrace");
    CHECK_OK(sp_result_export(live, pf, SP_FORMAT_PERFETTO));
    sp_result_release(live);
    size_t n = 0;
    unsigned char *data = slurp(pf, &n);
    if (!data) return;
    /* Every cut: refused (most), or loaded when the cut falls between
     * packets after the metadata with no slice open. */
    int refused = 0;
    for (size_t cut = 0; cut < n; cut++) {
        spill(bad, data, cut);
        refused += load_damaged(bad);
    }
    CHECK(refused > (int)n / 2);
    /* Bytes flipped, one at a time, then many at once (a fixed sequence). */
    unsigned char *copy = malloc(n);
    CHECK(copy != NULL);
    uint32_t x = 12345;
    for (size_t i = 0; copy && i < n; i += 2) {
        memcpy(copy, data, n);
        copy[i] ^= (unsigned char)(1u << (i % 8));
        spill(bad, copy, n);
        load_damaged(bad);
        memcpy(copy, data, n);
        for (int k = 0; k < 8; k++) {
            x = x * 1103515245u + 12345u;
            copy[(x >> 8) % n] = (unsigned char)(x >> 24);
        }
        spill(bad, copy, n);
        load_damaged(bad);
    }
    free(copy);
    free(data);
}

static void test_load_pftrace_refuses_other_producers(void)
{
    /* A minimal trace of another producer: one packet with a track event
     * on sequence 1, no stepprof first packet. */
    static const unsigned char other[] = {0x0a, 0x08, 0x40, 0x05, 0x50, 0x01, 0x5a, 0x02, 0x48, 0x03};
    const char *path = path_of("other.pftrace");
    spill(path, other, sizeof other);
    sp_result *r = NULL;
    CHECK_EQ(SP_EFORMAT, sp_result_load(path, NULL, &r));
    CHECK(r == NULL);
    CHECK(strstr(sp_last_error(), "other.pftrace") != NULL);
    CHECK(strstr(sp_last_error(), "stepprof reads the .pftrace files it writes") != NULL);
    /* Asked for as Perfetto, a JSON file is refused the same way. */
    const char *json = path_of("not.json");
    spill(json, (const unsigned char *)"{}", 2);
    sp_load_options o;
    sp_load_options_init(&o);
    o.format = SP_FORMAT_PERFETTO;
    CHECK_EQ(SP_EFORMAT, sp_result_load(json, &o, &r));
    CHECK(strstr(sp_last_error(), "not.json") != NULL);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_load_pftrace_odd_names_as_json);
    RUN_TEST(test_load_pftrace_empty_result);
    RUN_TEST(test_load_pftrace_truncated_and_corrupt);
    RUN_TEST(test_load_pftrace_refuses_other_producers);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
