/* gpu_records.c: moves a GPU recorder batch (gpu.h) into a collected result.
 * API calls go to the host thread that made them (a thread that made CUDA
 * calls but recorded no host range gets an entry of its own); kernels,
 * copies and memsets go to the result's device records. Times are put on
 * the host time line: ticks through the span's tick map, as host events
 * are, or CUPTI's CLOCK_REALTIME as is. Records that start outside the span
 * are dropped and counted as out_of_window (semantics.md §3.4: paddle drops
 * only those before the start). An API call's external id (the begin
 * ticks of its range) is always in host ticks, whatever the batch's clock,
 * and goes through the tick map as the range's own begin did, so the two
 * times are equal. Attribution is left to sp__attribute. */
#include "collect.h"

#include <string.h>

static int64_t to_ns(const sp__gpu_batch *b, const sp__tick_map *map, uint64_t t)
{
    if (b->clock == SP__GPU_CLOCK_TICKS) return sp__clock_to_real(map, t);
    return t > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t;
}

static int add_runtime(sp_result *r, const sp__gpu_record *g, int64_t start, int64_t end,
                       int64_t external_ns)
{
    sp__thread *t = sp__result_thread(r, g->tid);
    if (!t) return -1;
    size_t n = t->runtime_count;
    if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) { /* capacity 16, 32, 64, ...: not stored */
        size_t cap = n ? n * 2 : 16;
        sp__runtime *rt = sp__realloc(t->runtimes, sizeof *rt * cap);
        if (!rt) return -1;
        t->runtimes = rt;
    }
    t->runtimes[t->runtime_count++] = (sp__runtime){
        .start_ns = start,
        .end_ns = end,
        .name = sp__names_from_bytes(&r->names, g->name ? g->name : "", g->name ? strlen(g->name) : 0),
        .correlation = g->correlation,
        .cbid = g->cbid,
        .driver = g->kind == SP__GPU_DRIVER,
        .host = -2,
        .external_ns = external_ns,
    };
    return 0;
}

static void add_device(sp_result *r, const sp__gpu_record *g, int64_t start, int64_t end)
{
    static const uint8_t types[] = {[SP__GPU_KERNEL] = SP_EVENT_KERNEL,
                                    [SP__GPU_MEMCPY] = SP_EVENT_MEMCPY,
                                    [SP__GPU_MEMSET] = SP_EVENT_MEMSET};
    r->devices[r->device_count++] = (sp__device_rec){
        .start_ns = start,
        .end_ns = end,
        .name = sp__names_from_bytes(&r->names, g->name ? g->name : "", g->name ? strlen(g->name) : 0),
        .type = types[g->kind],
        .device = g->device,
        .context = g->context,
        .stream = g->stream,
        .correlation = g->correlation,
        .bytes = g->bytes,
        .thread = -2,
        .runtime = -2,
        .detail = g->detail,
    };
}

int sp__collect_gpu(sp_result *r, const sp__gpu_batch *b, const sp__tick_map *map)
{
    r->counters[SP_COUNTER_CUPTI_DROPPED] += b->cupti_dropped;
    r->counters[SP_COUNTER_DISCARDED_RECORDS] += b->discarded_records;
    r->counters[SP_COUNTER_ZERO_TIMESTAMP] += b->zero_timestamp;
    if (b->device_count) {
        sp__device_props *p = sp__alloc(sizeof *p * b->device_count);
        if (!p) return -1;
        memcpy(p, b->devices, sizeof *p * b->device_count);
        sp__free(r->device_props);
        r->device_props = p;
        r->device_prop_count = b->device_count;
    }
    size_t devices = 0;
    for (size_t i = 0; i < b->count; i++) devices += b->records[i].kind >= SP__GPU_KERNEL;
    if (devices) {
        sp__device_rec *d = sp__realloc(r->devices, sizeof *d * (r->device_count + devices));
        if (!d) return -1;
        r->devices = d;
    }
    for (size_t i = 0; i < b->count; i++) {
        const sp__gpu_record *g = &b->records[i];
        if (g->kind > SP__GPU_MEMSET) continue;
        int64_t start = to_ns(b, map, g->start), end = to_ns(b, map, g->end);
        if (end < start) end = start;
        if (start < r->span_start_ns || start > r->span_end_ns) {
            r->counters[SP_COUNTER_OUT_OF_WINDOW]++;
            continue;
        }
        if (g->kind >= SP__GPU_KERNEL)
            add_device(r, g, start, end);
        else if (add_runtime(r, g, start, end, g->external ? sp__clock_to_real(map, g->external) : 0) != 0)
            return -1;
    }
    return 0;
}
