/* fixture.h: builds collected results by hand for analysis tests: a thread
 * is a list of (name, type, start, end) ranges that gets its nesting exactly
 * as the collector would give it (sp__tree_build), and golden files are
 * compared byte for byte (written afresh when SP_UPDATE_GOLDEN is set, which
 * `make golden` does; the diff is then reviewed in the commit). */
#ifndef SP_TESTS_FIXTURE_H
#define SP_TESTS_FIXTURE_H

#include "check.h"
#include "collect.h"

#include <stdlib.h>
#include <string.h>

typedef struct fixture_range {
    const char *name;
    sp_event_type type;
    int64_t start_ns, end_ns;
} fixture_range;

static inline void fixture_add_thread(sp_result *r, uint64_t tid, const char *thread_name,
                                      const fixture_range *ranges, size_t n)
{
    sp__thread *ts = sp__realloc(r->threads, sizeof *ts * (r->thread_count + 1));
    CHECK(ts != NULL);
    if (!ts) return;
    r->threads = ts;
    sp__thread *t = &ts[r->thread_count++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->name = sp__names_from_ptr(&r->names, thread_name);
    t->events = n ? sp__alloc(sizeof *t->events * n) : NULL;
    CHECK(n == 0 || t->events != NULL);
    if (!t->events) return;
    t->count = t->cap = n;
    for (size_t i = 0; i < n; i++) {
        sp__event *e = &t->events[i];
        e->name = sp__names_from_ptr(&r->names, ranges[i].name);
        e->type = (uint8_t)ranges[i].type;
        e->start_ns = ranges[i].start_ns;
        e->end_ns = ranges[i].end_ns;
        e->parent = -1;
    }
    sp__tree_build(t->events, n);
}

/* Appends a synthetic CUDA runtime call (CUPTI RUNTIME record) to thread t. */
static inline void fixture_add_runtime(sp_result *r, sp__thread *t, const char *name,
                                       int64_t start_ns, int64_t end_ns, uint32_t correlation)
{
    sp__runtime *rt = sp__realloc(t->runtimes, sizeof *rt * (t->runtime_count + 1));
    CHECK(rt != NULL);
    if (!rt) return;
    t->runtimes = rt;
    rt[t->runtime_count++] = (sp__runtime){start_ns, end_ns, sp__names_from_ptr(&r->names, name),
                                           correlation, 211, 0, -2, 0};
}

/* Appends a synthetic device record (kernel, memcpy or memset) on device 0
 * unless told otherwise. */
static inline void fixture_add_device(sp_result *r, const char *name, sp_event_type type,
                                      int64_t start_ns, int64_t end_ns, uint32_t device,
                                      uint32_t stream, uint32_t correlation)
{
    sp__device_rec *d = sp__realloc(r->devices, sizeof *d * (r->device_count + 1));
    CHECK(d != NULL);
    if (!d) return;
    r->devices = d;
    d[r->device_count++] = (sp__device_rec){.start_ns = start_ns, .end_ns = end_ns,
                                            .name = sp__names_from_ptr(&r->names, name),
                                            .type = (uint8_t)type, .device = device, .context = 1,
                                            .stream = stream, .correlation = correlation,
                                            .thread = -2, .runtime = -2};
}

/* Appends a synthetic memory event to thread t (type: 0 Allocate, 1 Free,
 * 2 ReservedAllocate, 3 ReservedFree; bytes negative for frees). */
static inline void fixture_add_mem(sp_result *r, sp__thread *t, int64_t ts_ns, int type,
                                   const char *place, uint64_t addr, int64_t bytes,
                                   uint64_t current_allocated, uint64_t current_reserved,
                                   uint64_t peak_allocated, uint64_t peak_reserved)
{
    sp__mem_event *m = sp__realloc(t->mems, sizeof *m * (t->mem_count + 1));
    CHECK(m != NULL);
    if (!m) return;
    t->mems = m;
    m[t->mem_count++] = (sp__mem_event){ts_ns, (uint8_t)type, sp__names_from_ptr(&r->names, place),
                                        addr, bytes, current_allocated, current_reserved,
                                        peak_allocated, peak_reserved, -2};
}

/* Appends an op supplement to thread t. inputs is a "|"-separated list of
 * "key:dtype:d0xd1x..." tensors (e.g. "X:float32:8x16|Y:float32:16"); each
 * tensor becomes its own key, as the encoding of collect.h allows. */
static inline void fixture_add_op(sp_result *r, sp__thread *t, int64_t ts_ns, const char *op_type,
                                  const char *callstack, const char *inputs)
{
    sp__op_supplement *o = sp__realloc(t->ops, sizeof *o * (t->op_count + 1));
    CHECK(o != NULL);
    if (!o) return;
    t->ops = o;
    uint64_t words[256];
    size_t n = 0, keys_at[2] = {0, 0};
    char buf[512];
    snprintf(buf, sizeof buf, "%s", inputs);
    for (int pass = 0; pass < 2; pass++) { /* 0: shapes, 1: dtypes */
        keys_at[pass] = n;
        words[n++] = 0;
        char copy[512];
        memcpy(copy, buf, sizeof copy);
        char *save = NULL;
        for (char *tensor = strtok_r(copy, "|", &save); tensor && *tensor; tensor = strtok_r(NULL, "|", &save)) {
            char *key = tensor, *dtype = strchr(key, ':'), *dims = dtype ? strchr(dtype + 1, ':') : NULL;
            if (!dtype || !dims) break;
            *dtype++ = '\0';
            *dims++ = '\0';
            words[keys_at[pass]]++;
            words[n++] = sp__names_from_bytes(&r->names, key, strlen(key));
            words[n++] = 1; /* one tensor under this key */
            if (pass == 1) {
                words[n++] = sp__names_from_bytes(&r->names, dtype, strlen(dtype));
                continue;
            }
            size_t rank_at = n++;
            words[rank_at] = 0;
            for (char *d = dims; *d;) {
                words[n++] = strtoull(d, &d, 10);
                words[rank_at]++;
                if (*d == 'x') d++;
                else break;
            }
        }
    }
    uint64_t *w = sp__realloc(t->op_words, sizeof *w * (t->op_word_count + n));
    CHECK(w != NULL);
    if (!w) return;
    memcpy(w + t->op_word_count, words, sizeof *w * n);
    t->op_words = w;
    size_t i = t->op_count++;
    t->ops[i] = (sp__op_supplement){
        .ts_ns = ts_ns,
        .op_type = sp__names_from_ptr(&r->names, op_type),
        .callstack = sp__names_from_ptr(&r->names, callstack),
        .op_id = i + 1,
        .words = t->op_word_count,
        .host = -2,
    };
    t->op_word_count += n;
}

/* Compares text with tests/golden/<name>; with SP_UPDATE_GOLDEN set, writes
 * the file instead. */
static inline void fixture_check_golden(const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/golden/%s", SP_SOURCE_DIR, name);
    if (getenv("SP_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (f) {
            fputs(text, f);
            fclose(f);
        }
        return;
    }
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    static char expected[1 << 16];
    size_t n = fread(expected, 1, sizeof expected - 1, f);
    fclose(f);
    expected[n] = '\0';
    CHECK_STR_EQ(expected, text);
}

#endif
