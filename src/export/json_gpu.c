/* json_gpu.c: writes a result's GPU data and op supplements into its
 * Chrome-trace JSON (trace-format.md §2, §5-8): deviceProperties, the GPU
 * track metadata, runtime/driver calls on their host threads, kernels,
 * memcpys and memsets on (device, stream) tracks, ac2g flows, the
 * gpu_user_annotation records and the Input Dims / Input type / Call stack
 * args of cpu_op ranges. chrome_json.c calls it while streaming a file.
 *
 * External ids are those chrome_json.c gives host ranges: numbered from 1 in
 * write order (threads in order, then each thread's events in order, every
 * event that is not an instant or counter). sp__json_gpu_init replays that
 * numbering once, in one pass over the events of the threads (O(events)),
 * and keeps per runtime record only what the writer needs: the id of the
 * nearest cpu_op and of the nearest user_annotation range at or above its
 * host node, and the device record that ends its flow (the earliest-starting
 * one with dur > 0, found in one pass over the device records). Device
 * records are written in (device, stream, start, longer first) order, which
 * costs one sort. Nothing here runs when a result has no GPU records. */
#include "json_gpu.h"
#include "json_escape.h"
#include "occupancy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- setup */

typedef struct dev_key {
    uint32_t device, stream;
    int64_t start, end;
    uint32_t index;
} dev_key;

/* Track order: device, stream, start ascending, longer first, record order. */
static int by_track(const void *pa, const void *pb)
{
    const dev_key *a = pa, *b = pb;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end > b->end ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The runtime record that launched device record d, or NULL. */
static sp__json_rt *launcher(const sp__json_gpu *g, const sp__device_rec *d)
{
    const sp_result *r = g->r;
    if (d->thread < 0 || (size_t)d->thread >= r->thread_count || d->runtime < 0 ||
        (size_t)d->runtime >= r->threads[d->thread].runtime_count || !g->rt[d->thread])
        return NULL;
    return &g->rt[d->thread][d->runtime];
}

/* Whether device record a starts before b (ties: write order). */
static int earlier(const sp__device_rec *a, size_t ia, const sp__device_rec *b, size_t ib)
{
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    dev_key ka = {a->device, a->stream, a->start_ns, a->end_ns, (uint32_t)ia};
    dev_key kb = {b->device, b->stream, b->start_ns, b->end_ns, (uint32_t)ib};
    return by_track(&ka, &kb) < 0;
}

/* Replays chrome_json.c's External id numbering over every thread and fills
 * each runtime record's ids. ext/op/user are scratch of the largest thread's
 * size. */
static void number_threads(sp__json_gpu *g, uint64_t *ext, uint64_t *op, int32_t *user)
{
    const sp_result *r = g->r;
    uint64_t next = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        if (!g->rt[i]) {
            for (size_t j = 0; j < t->count; j++)
                next += !sp__event_is_mark(&t->events[j]);
            continue;
        }
        for (size_t j = 0; j < t->count; j++) {
            const sp__event *e = &t->events[j];
            int32_t p = e->parent >= 0 && (size_t)e->parent < j ? e->parent : -1;
            ext[j] = sp__event_is_mark(e) ? 0 : ++next;
            op[j] = p >= 0 ? op[p] : 0;
            user[j] = p >= 0 ? user[p] : -1;
            if (!ext[j]) continue;
            if (sp__json_event_is_op(r, e))
                op[j] = ext[j];
            else
                user[j] = (int32_t)j;
        }
        for (size_t k = 0; k < t->runtime_count; k++) {
            int32_t h = t->runtimes[k].host;
            int ok = h >= 0 && (size_t)h < t->count;
            g->rt[i][k] = (sp__json_rt){ok ? op[h] : 0, 0, ok ? user[h] : -1, -1};
            if (g->rt[i][k].user_event >= 0) g->rt[i][k].user_ext = ext[g->rt[i][k].user_event];
        }
    }
}

int sp__json_gpu_init(sp__json_gpu *g, const sp_result *r, sp__out *out, int64_t base_ns,
                      sp__json_heads *heads)
{
    memset(g, 0, sizeof *g);
    g->r = r;
    g->out = out;
    g->b = sp__out_buf(out);
    g->base_ns = base_ns;
    g->heads = heads;
    sp__buf_init(&g->scratch);
    sp__buf_init(&g->metrics);
    size_t runtimes = 0, largest = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        runtimes += r->threads[i].runtime_count;
        if (r->threads[i].runtime_count && r->threads[i].count > largest)
            largest = r->threads[i].count;
    }
    if (runtimes == 0 && r->device_count == 0) return 0;

    uint64_t *ext = NULL, *op = NULL;
    int32_t *user = NULL;
    dev_key *keys = NULL;
    g->rt = sp__alloc(sizeof *g->rt * (r->thread_count ? r->thread_count : 1));
    if (!g->rt) goto fail;
    for (size_t i = 0; i < r->thread_count; i++) {
        size_t n = r->threads[i].runtime_count;
        if (n && !(g->rt[i] = sp__alloc(sizeof **g->rt * n))) goto fail;
    }
    if (largest) {
        ext = sp__alloc(sizeof *ext * largest);
        op = sp__alloc(sizeof *op * largest);
        user = sp__alloc(sizeof *user * largest);
        if (!ext || !op || !user) goto fail;
    }
    number_threads(g, ext, op, user);

    if (r->device_count) {
        keys = sp__alloc(sizeof *keys * r->device_count);
        g->order = sp__alloc(sizeof *g->order * r->device_count);
        if (!keys || !g->order) goto fail;
    }
    for (size_t d = 0; d < r->device_count; d++) {
        const sp__device_rec *dev = &r->devices[d];
        keys[d] = (dev_key){dev->device, dev->stream, dev->start_ns, dev->end_ns, (uint32_t)d};
        sp__json_rt *rt = launcher(g, dev);
        if (!rt || dev->end_ns <= dev->start_ns) continue;
        if (rt->flow_dev < 0 || earlier(dev, d, &r->devices[rt->flow_dev], (size_t)rt->flow_dev))
            rt->flow_dev = (int32_t)d;
    }
    if (r->device_count > 1) qsort(keys, r->device_count, sizeof *keys, by_track);
    for (size_t d = 0; d < r->device_count; d++)
        g->order[d] = keys[d].index;
    sp__free(keys);
    sp__free(ext);
    sp__free(op);
    sp__free(user);
    return 0;
fail:
    sp__free(keys);
    sp__free(ext);
    sp__free(op);
    sp__free(user);
    sp__json_gpu_fini(g);
    return -1;
}

void sp__json_gpu_fini(sp__json_gpu *g)
{
    if (g->rt)
        for (size_t i = 0; i < g->r->thread_count; i++)
            sp__free(g->rt[i]);
    sp__free(g->rt);
    sp__free(g->order);
    sp__free(g->ops);
    sp__buf_fini(&g->scratch);
    sp__buf_fini(&g->metrics);
    g->rt = NULL;
    g->order = NULL;
    g->ops = NULL;
}

/* ------------------------------------------------------ §2 and §5 metadata */

void sp__json_put_device_props(sp__buf *b, const sp_result *r)
{
    sp__buf_putc(b, '[');
    for (size_t i = 0; i < r->device_prop_count; i++) {
        const sp__device_props *p = &r->device_props[i];
        sp__buf_printf(b, "%s{\"id\":%u,\"name\":", i ? ",\n " : "", p->id);
        sp__json_put_string(b, p->name, strnlen(p->name, sizeof p->name));
        sp__buf_printf(b,
                       ",\"totalGlobalMem\":%llu,\"computeMajor\":%u,\"computeMinor\":%u,"
                       "\"maxThreadsPerBlock\":%u,\"maxThreadsPerMultiprocessor\":%u,"
                       "\"regsPerBlock\":%u,\"warpSize\":%u,\"sharedMemPerBlock\":%llu,"
                       "\"numSms\":%u,\"regsPerMultiprocessor\":%u,"
                       "\"sharedMemPerBlockOptin\":%llu,\"sharedMemPerMultiprocessor\":%llu}",
                       (unsigned long long)p->total_global_mem, p->compute_major, p->compute_minor,
                       p->max_threads_per_block, p->max_threads_per_sm, p->regs_per_block,
                       p->warp_size, (unsigned long long)p->shared_per_block, p->num_sms,
                       p->regs_per_sm, (unsigned long long)p->shared_per_block_optin,
                       (unsigned long long)p->shared_per_sm);
    }
    sp__buf_putc(b, ']');
}

static void put_meta(sp__json_gpu *g, const char *what, uint32_t pid, uint32_t tid, const char *key,
                     const char *text, unsigned long long number)
{
    sp__buf_printf(g->b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u", what, pid, tid);
    sp__json_put_time(g->b, "ts", g->r->span_start_ns - g->base_ns);
    if (text)
        sp__buf_printf(g->b, ",\"args\":{\"%s\":\"%s\"}},\n", key, text);
    else
        sp__buf_printf(g->b, ",\"args\":{\"%s\":%llu}},\n", key, number);
}

void sp__json_put_gpu_tracks(sp__json_gpu *g)
{
    const sp_result *r = g->r;
    if (!g->order) return;
    for (size_t n = 0; n < r->device_count; n++) {
        const sp__device_rec *d = &r->devices[g->order[n]];
        const sp__device_rec *prev = n ? &r->devices[g->order[n - 1]] : NULL;
        if (prev && prev->device == d->device && prev->stream == d->stream) continue;
        if (!prev || prev->device != d->device) {
            char label[32];
            snprintf(label, sizeof label, "GPU %u", d->device);
            put_meta(g, "process_name", d->device, 0, "name", label, 0);
            put_meta(g, "process_labels", d->device, 0, "labels", label, 0);
            put_meta(g, "process_sort_index", d->device, 0, "sort_index", NULL,
                     268435456ull + d->device);
        }
        char label[32];
        snprintf(label, sizeof label, "stream %u", d->stream);
        put_meta(g, "thread_name", d->device, d->stream, "name", label, 0);
        put_meta(g, "thread_sort_index", d->device, d->stream, "sort_index", NULL, d->stream);
    }
}

/* ------------------------------------------------------- op supplements */

const int32_t *sp__json_gpu_thread(sp__json_gpu *g, size_t i)
{
    const sp__thread *t = &g->r->threads[i];
    g->next_rt = 0;
    if (t->op_count == 0 || t->count == 0) return NULL;
    if (g->ops_cap < t->count) {
        int32_t *ops = sp__realloc(g->ops, sizeof *ops * t->count);
        if (!ops) {
            g->b->failed = 1;
            return NULL;
        }
        g->ops = ops;
        g->ops_cap = t->count;
    }
    for (size_t j = 0; j < t->count; j++)
        g->ops[j] = -1;
    int any = 0;
    for (size_t k = 0; k < t->op_count; k++) {
        int32_t h = t->ops[k].host;
        if (h < 0 || (size_t)h >= t->count || sp__event_is_mark(&t->events[h]) ||
            !sp__json_event_is_op(g->r, &t->events[h]))
            continue;
        g->ops[h] = (int32_t)k; /* at most one per node: the last wins */
        any = 1;
    }
    return any ? g->ops : NULL;
}

static void put_i64(sp__buf *b, int64_t v)
{
    if (v < 0) sp__buf_putc(b, '-');
    sp__json_put_u64(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

/* Appends the JSON list of every key's shapes (dims) or dtypes (!dims) read
 * from w[*at..n); advances *at. Stops at the end of the words. */
static void put_inputs(sp__buf *b, const sp_result *r, const uint64_t *w, size_t n, size_t *at,
                       int dims)
{
    size_t i = *at, written = 0;
    sp__buf_putc(b, '[');
    uint64_t keys = i < n ? w[i++] : 0;
    for (uint64_t key = 0; key < keys && i + 1 < n; key++) {
        i++; /* the key's name */
        uint64_t items = w[i++];
        for (uint64_t item = 0; item < items && i < n; item++) {
            if (written++) sp__buf_putc(b, ',');
            if (!dims) {
                const char *name = sp__result_name(r, (uint32_t)w[i++]);
                sp__json_put_string(b, name, strlen(name));
                continue;
            }
            uint64_t rank = w[i++];
            sp__buf_putc(b, '[');
            for (uint64_t d = 0; d < rank && i < n; d++) {
                if (d) sp__buf_putc(b, ',');
                put_i64(b, (int64_t)w[i++]);
            }
            sp__buf_putc(b, ']');
        }
    }
    sp__buf_putc(b, ']');
    *at = i;
}

void sp__json_put_op_args(sp__buf *b, const sp_result *r, const sp__thread *t, size_t k)
{
    const sp__op_supplement *op = &t->ops[k];
    size_t at = op->words;
    sp__buf_puts(b, "\"Input Dims\":");
    put_inputs(b, r, t->op_words, t->op_word_count, &at, 1);
    sp__buf_puts(b, ",\"Input type\":");
    put_inputs(b, r, t->op_words, t->op_word_count, &at, 0);
    sp__buf_putc(b, ',');
    const char *stack = sp__result_name(r, op->callstack);
    if (*stack) {
        sp__buf_puts(b, "\"Call stack\":");
        sp__json_put_string(b, stack, strlen(stack));
        sp__buf_putc(b, ',');
    }
}

/* ---------------------------------------------------------- event heads */

/* Appends `{"ph":"X","cat":"<cat>","name":<name>` for a recorded name,
 * from the writer's head cache (under key, which host events never use) or
 * rendered and stored there. Runtime and driver calls (key < 0x90) lose
 * their `_vNNNN` suffix. The pid and tid, which vary, follow separately. */
static void put_head(sp__json_gpu *g, uint32_t name, uint8_t key, const char *cat)
{
    size_t len;
    const char *head = g->heads->count ? sp__json_head_find(g->heads, name, key, &len) : NULL;
    if (head) {
        sp__buf_append(g->b, head, len);
        return;
    }
    sp__buf *b = &g->scratch;
    b->len = 0;
    sp__buf_puts(b, "{\"ph\":\"X\",\"cat\":\"");
    sp__buf_puts(b, cat);
    sp__buf_puts(b, "\",\"name\":");
    const char *text = sp__result_name(g->r, name);
    size_t n = strlen(text);
    if (key < 0x90) {
        const char *v = strrchr(text, '_');
        size_t digits = v && v[1] == 'v' ? strspn(v + 2, "0123456789") : 0;
        if (digits && v[2 + digits] == '\0') n = (size_t)(v - text);
    }
    sp__json_put_string(b, text, n);
    if (b->failed) {
        g->b->failed = 1;
        return;
    }
    sp__buf_append(g->b, b->data, b->len);
    if (g->heads->count) sp__json_head_store(g->heads, name, key, b->data, b->len);
}

/* Writes `,"pid":<pid>,"tid":<tid>` at p (room for 64 bytes); returns its length. */
static size_t track_text(char *p, int64_t pid, uint64_t tid)
{
    char *start = p;
    memcpy(p, ",\"pid\":", 7);
    p += 7;
    if (pid < 0) *p++ = '-';
    p = sp__json_u64_at(p, pid < 0 ? 0 - (uint64_t)pid : (uint64_t)pid);
    memcpy(p, ",\"tid\":", 7);
    p = sp__json_u64_at(p + 7, tid);
    *p = '\0';
    return (size_t)(p - start);
}

/* Appends key_text (`,"key":` or `"key":`) and v: printf was most of the
 * cost of GPU lines. */
static void put_key(sp__buf *b, const char *key_text, uint64_t v)
{
    sp__buf_puts(b, key_text);
    sp__json_put_u64(b, v);
}

static void put_interval(sp__json_gpu *g, int64_t start_ns, int64_t end_ns)
{
    sp__json_put_time(g->b, "ts", start_ns - g->base_ns);
    sp__json_put_time(g->b, "dur", end_ns - start_ns);
}

static void put_flow(sp__json_gpu *g, char ph, uint32_t id, const char *pid_tid, int64_t ts_ns)
{
    put_key(g->b,
            ph == 'f' ? "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":"
                      : "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":",
            id);
    sp__buf_putc(g->b, ',');
    sp__buf_puts(g->b, pid_tid);
    sp__json_put_time(g->b, "ts", ts_ns - g->base_ns);
    sp__buf_puts(g->b, ph == 'f' ? ",\"bp\":\"e\"},\n" : "},\n");
}

/* ------------------------------------------------------- runtime calls */

static void put_runtime(sp__json_gpu *g, size_t i, size_t k)
{
    const sp__thread *t = &g->r->threads[i];
    const sp__runtime *rt = &t->runtimes[k];
    const sp__json_rt *info = &g->rt[i][k];
    char track[64];
    size_t n = track_text(track, g->r->meta.pid, t->tid);
    put_head(g, rt->name, (uint8_t)(0x80 + (rt->driver != 0)),
             rt->driver ? "cuda_driver" : "cuda_runtime");
    sp__buf_append(g->b, track, n);
    put_interval(g, rt->start_ns, rt->end_ns);
    sp__buf_puts(g->b, ",\"args\":{");
    if (info->op_ext) {
        put_key(g->b, "\"External id\":", info->op_ext);
        sp__buf_putc(g->b, ',');
    }
    put_key(g->b, "\"cbid\":", rt->cbid);
    put_key(g->b, ",\"correlation\":", rt->correlation);
    sp__buf_puts(g->b, "}},\n");
    if (info->flow_dev >= 0) put_flow(g, 's', rt->correlation, track + 1, rt->start_ns);
    sp__out_maybe_flush(g->out);
}

void sp__json_put_runtimes_until(sp__json_gpu *g, size_t i, const sp__event *e)
{
    const sp__thread *t = &g->r->threads[i];
    for (; g->next_rt < t->runtime_count; g->next_rt++) {
        const sp__runtime *rt = &t->runtimes[g->next_rt];
        if (rt->start_ns > e->start_ns || (rt->start_ns == e->start_ns && rt->end_ns <= e->end_ns))
            return;
        put_runtime(g, i, g->next_rt);
    }
}

void sp__json_put_runtimes_rest(sp__json_gpu *g, size_t i)
{
    const sp__thread *t = &g->r->threads[i];
    for (; g->next_rt < t->runtime_count; g->next_rt++)
        put_runtime(g, i, g->next_rt);
}

/* ------------------------------------------------------- device records */

static void put_double(sp__buf *b, const char *key_text, double v)
{
    sp__buf_puts(b, key_text);
    sp__json_put_double(b, v);
}

static int same_launch(const sp__kernel_detail *a, const sp__kernel_detail *b)
{
    for (int i = 0; i < 3; i++)
        if (a->grid[i] != b->grid[i] || a->block[i] != b->block[i]) return 0;
    return a->registers == b->registers && a->static_shared == b->static_shared &&
           a->dynamic_shared == b->dynamic_shared;
}

/* `,"registers per thread":...,"est. achieved occupancy %":N}},` and a
 * newline. Rendering it costs a few shortest-double searches, so the last
 * one is kept and reused while the same launch on the same device repeats. */
static void put_kernel_args(sp__json_gpu *g, const sp__device_rec *d)
{
    const sp__device_props *p = sp__result_device_props(g->r, d->device);
    sp__kernel_detail k = d->detail.kernel;
    if (g->metrics.len && !g->metrics.failed && p == g->metrics_props &&
        same_launch(&k, &g->metrics_kernel)) {
        sp__buf_append(g->b, g->metrics.data, g->metrics.len);
        return;
    }
    double blocks, warps, occupancy;
    sp__kernel_occupancy(p, &k, &blocks, &warps, &occupancy);
    sp__buf *m = &g->metrics;
    m->len = 0;
    m->failed = 0;
    put_key(m, ",\"registers per thread\":", k.registers);
    put_key(m, ",\"shared memory\":", (uint64_t)k.static_shared + k.dynamic_shared);
    put_double(m, ",\"blocks per SM\":", blocks);
    put_double(m, ",\"warps per SM\":", warps);
    for (int a = 0; a < 2; a++) {
        const uint32_t *v = a ? k.block : k.grid;
        put_key(m, a ? "],\"block\":[" : ",\"grid\":[", v[0]);
        put_key(m, ",", v[1]);
        put_key(m, ",", v[2]);
    }
    put_key(m, "],\"est. achieved occupancy %\":", (uint64_t)(100.0 * occupancy + 0.5));
    sp__buf_puts(m, "}},\n");
    g->metrics_props = p;
    g->metrics_kernel = k;
    if (m->failed)
        g->b->failed = 1;
    else
        sp__buf_append(g->b, m->data, m->len);
}

static void put_device(sp__json_gpu *g, size_t index)
{
    const sp__device_rec *d = &g->r->devices[index];
    const sp__json_rt *rt = launcher(g, d);
    char track[64];
    size_t n = track_text(track, d->device, d->stream);
    if (d->type == SP_EVENT_KERNEL) {
        put_head(g, d->name, 0x90, "kernel");
    } else {
        char name[96];
        if (d->type == SP_EVENT_MEMCPY)
            snprintf(name, sizeof name, "Memcpy %s (%s -> %s)",
                     sp__gpu_copy_kind_name(d->detail.copy.copy_kind),
                     sp__gpu_memory_kind_name(d->detail.copy.src_kind),
                     sp__gpu_memory_kind_name(d->detail.copy.dst_kind));
        else
            snprintf(name, sizeof name, "Memset (%s)",
                     sp__gpu_memory_kind_name(d->detail.set.memory_kind));
        sp__buf_puts(g->b, d->type == SP_EVENT_MEMCPY
                               ? "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":"
                               : "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":");
        sp__json_put_string(g->b, name, strlen(name));
    }
    sp__buf_append(g->b, track, n);
    put_interval(g, d->start_ns, d->end_ns);
    sp__buf_puts(g->b, ",\"args\":{");
    if (rt && rt->op_ext) {
        put_key(g->b, "\"External id\":", rt->op_ext);
        sp__buf_putc(g->b, ',');
    }
    if (d->type == SP_EVENT_KERNEL) {
        put_key(g->b, "\"queued\":", d->detail.kernel.queued_ns);
        sp__buf_putc(g->b, ',');
    }
    put_key(g->b, "\"device\":", d->device);
    put_key(g->b, ",\"context\":", d->context);
    put_key(g->b, ",\"stream\":", d->stream);
    put_key(g->b, ",\"correlation\":", d->correlation);
    if (d->type == SP_EVENT_KERNEL) {
        put_kernel_args(g, d);
    } else {
        int64_t dur = d->end_ns - d->start_ns;
        put_key(g->b, ",\"bytes\":", d->bytes);
        put_double(g->b,
                   ",\"memory bandwidth (GB/s)\":", dur > 0 ? (double)d->bytes / (double)dur : 0.0);
        sp__buf_puts(g->b, "}},\n");
    }
    if (rt && rt->flow_dev == (int32_t)index)
        put_flow(g, 'f', d->correlation, track + 1, d->start_ns);
    sp__out_maybe_flush(g->out);
}

/* A kernel's share of a gpu_user_annotation: its track, range and times. */
typedef struct annotation {
    uint32_t device, stream;
    uint64_t ext;
    int32_t thread, event;
    int64_t start, end;
} annotation;

static int by_range(const void *pa, const void *pb)
{
    const annotation *a = pa, *b = pb;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
    return a->ext < b->ext ? -1 : a->ext > b->ext;
}

static int by_start(const void *pa, const void *pb)
{
    const annotation *a = pa, *b = pb;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end > b->end ? -1 : 1;
    return a->ext < b->ext ? -1 : a->ext > b->ext;
}

/* §8: one record per (device, stream, user range) over its kernels, from
 * the first start - 1 ns to the last end + 1 ns. */
static void put_annotations(sp__json_gpu *g)
{
    const sp_result *r = g->r;
    annotation *a = sp__alloc(sizeof *a * r->device_count);
    if (!a) {
        g->b->failed = 1;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->device_count; i++) {
        const sp__device_rec *d = &r->devices[i];
        const sp__json_rt *rt = launcher(g, d);
        if (d->type != SP_EVENT_KERNEL || !rt || rt->user_event < 0) continue;
        a[n++] = (annotation){d->device,      d->stream,   rt->user_ext, d->thread,
                              rt->user_event, d->start_ns, d->end_ns};
    }
    if (n > 1) qsort(a, n, sizeof *a, by_range);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && by_range(&a[m - 1], &a[i]) == 0) {
            if (a[i].start < a[m - 1].start) a[m - 1].start = a[i].start;
            if (a[i].end > a[m - 1].end) a[m - 1].end = a[i].end;
        } else {
            a[m++] = a[i];
        }
    }
    if (m > 1) qsort(a, m, sizeof *a, by_start);
    for (size_t i = 0; i < m; i++) {
        const sp__event *e = &r->threads[a[i].thread].events[a[i].event];
        sp__buf_puts(g->b, "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":");
        sp__json_put_event_name(g->b, r, e);
        sp__buf_printf(g->b, ",\"pid\":%u,\"tid\":%u", a[i].device, a[i].stream);
        put_interval(g, a[i].start - 1, a[i].end + 1);
        sp__buf_printf(g->b, ",\"args\":{\"External id\":%llu}},\n", (unsigned long long)a[i].ext);
        sp__out_maybe_flush(g->out);
    }
    sp__free(a);
}

void sp__json_put_device_tracks(sp__json_gpu *g)
{
    if (!g->order) return;
    for (size_t n = 0; n < g->r->device_count; n++)
        put_device(g, g->order[n]);
    put_annotations(g);
}
