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
                                           correlation, 211, 0, -2};
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
    d[r->device_count++] = (sp__device_rec){start_ns, end_ns, sp__names_from_ptr(&r->names, name),
                                            (uint8_t)type, device, 1, stream, correlation, 0, -2, -2};
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
