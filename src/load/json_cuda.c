/* json_cuda.c: turns the CUDA events of a Chrome-trace JSON (stepprof's
 * dialect, trace-format.md §2, §6, §7, which is Kineto's) back into runtime
 * calls and device records, for load_json.c.
 *
 * The JSON keeps what the tables need: times, correlation ids (so that
 * sp__attribute, in sp__builder_finish, finds each record's launching call
 * and host range as it does for a live result), devices, streams, bytes and
 * the launch configuration, and deviceProperties for the occupancy column.
 * What it does not keep is left at 0: a runtime call's `_vNNNN` name suffix
 * (no table prints runtime names; the wait rules match by prefix), the
 * split of shared memory into static and dynamic (their sum, which is all
 * the occupancy estimate uses, goes to static), local memory, submitted
 * times, a memset's value and a device's max_blocks_per_sm (the estimate
 * then derives it from the compute capability). Memcpy and memset records
 * get the names the recorder gives them ("MEMCPY_HtoD", "MEMSET"), rebuilt
 * from the kinds the JSON name spells. */
#include "json_cuda.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp__cuda_args_reset(sp__cuda_args *a)
{
    memset(a, 0, sizeof *a);
}

void sp__cuda_arg_number(sp__cuda_args *a, const char *key, int64_t v)
{
    if (strcmp(key, "correlation") == 0) {
        a->correlation = v;
        a->has_correlation = 1;
        if (v < 0 || v > UINT32_MAX) a->bad = 1;
    } else if (strcmp(key, "cbid") == 0) {
        a->cbid = v;
    } else if (strcmp(key, "device") == 0) {
        a->device = v, a->has_device = 1;
    } else if (strcmp(key, "context") == 0) {
        a->context = v, a->has_context = 1;
    } else if (strcmp(key, "stream") == 0) {
        a->stream = v, a->has_stream = 1;
    } else if (strcmp(key, "bytes") == 0) {
        a->bytes = v;
    } else if (strcmp(key, "registers per thread") == 0) {
        a->registers = v;
    } else if (strcmp(key, "shared memory") == 0) {
        a->shared = v;
    } else if (strcmp(key, "queued") == 0) {
        a->queued = v;
    }
}

static int is_our_key(const char *key)
{
    static const char *const keys[] = {"correlation", "cbid", "device", "context", "stream",
                                       "bytes", "registers per thread", "shared memory"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0) return 1;
    return 0;
}

/* [x, y, z] of non-negative integers; anything else marks the args bad. */
static int read_dim(sp__cuda_args *a, sp__jlex *lx, uint32_t out[3])
{
    if (sp__jlex_expect(lx, '[') != 0) return -1;
    if (sp__jlex_peek(lx) == ']') {
        a->bad = 1;
        return sp__jlex_expect(lx, ']') == 0 ? 1 : -1;
    }
    int n = 0, more = 1;
    while (more == 1) {
        int c = sp__jlex_peek(lx);
        if (c >= '0' && c <= '9') {
            if (sp__jlex_number(lx) != 0) return -1;
            long long v = strtoll(lx->tok.data, NULL, 10);
            if (n < 3 && v <= UINT32_MAX && !strpbrk(lx->tok.data, ".eE")) out[n] = (uint32_t)v;
            else a->bad = 1;
        } else {
            a->bad = 1;
            if (sp__jlex_skip(lx) != 0) return -1;
        }
        n++;
        more = sp__jlex_next(lx, ']');
    }
    if (n != 3) a->bad = 1;
    return more < 0 ? -1 : 1;
}

int sp__cuda_arg_other(sp__cuda_args *a, sp__jlex *lx, const char *key)
{
    int grid = strcmp(key, "grid") == 0, block = strcmp(key, "block") == 0;
    if (grid || block) {
        if (sp__jlex_peek(lx) == '[') return read_dim(a, lx, grid ? a->grid : a->block);
        a->bad = 1;
        return 0;
    }
    if (is_our_key(key) && sp__jlex_peek(lx) != 'n') a->bad = 1; /* null: as if absent */
    return 0;
}

sp_event_type sp__cuda_type(const char *ph, const char *cat, int *driver)
{
    *driver = 0;
    if (strcmp(ph, "X") != 0) return SP_EVENT_TYPE_COUNT;
    if (strcmp(cat, "cuda_runtime") == 0) return SP_EVENT_CUDA_RUNTIME;
    if (strcmp(cat, "cuda_driver") == 0) return (*driver = 1), SP_EVENT_CUDA_RUNTIME;
    if (strcmp(cat, "kernel") == 0) return SP_EVENT_KERNEL;
    if (strcmp(cat, "gpu_memcpy") == 0) return SP_EVENT_MEMCPY;
    if (strcmp(cat, "gpu_memset") == 0) return SP_EVENT_MEMSET;
    return SP_EVENT_TYPE_COUNT;
}

/* The bytes [from, to) as a string in out (cut to fit). */
static void span_text(const char *from, const char *to, char *out, size_t size)
{
    size_t n = (size_t)(to - from);
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), from);
}

/* Sets d's kinds from "Memcpy HtoD (Pageable -> Device)" or "Memset
 * (Device)", as json_gpu.c writes them (memory kinds may hold a space); a
 * name of another form gives "Unknown" kinds. Returns the recorder's name
 * for the record ("MEMCPY_HtoD", "MEMSET") in out. */
static void copy_kinds(const char *name, sp__device_rec *d, char *out, size_t size)
{
    char kind[32] = "", src[32] = "", dst[32] = "";
    size_t len = strlen(name);
    const char *open = strstr(name, " (");
    int closed = len > 0 && name[len - 1] == ')';
    if (d->type == SP_EVENT_MEMCPY) {
        const char *arrow = open ? strstr(open, " -> ") : NULL;
        if (strncmp(name, "Memcpy ", 7) == 0 && open && arrow && closed) {
            span_text(name + 7, open, kind, sizeof kind);
            span_text(open + 2, arrow, src, sizeof src);
            span_text(arrow + 4, name + len - 1, dst, sizeof dst);
        }
        d->detail.copy.copy_kind = (uint8_t)sp__gpu_copy_kind_parse(kind);
        d->detail.copy.src_kind = (uint8_t)sp__gpu_memory_kind_parse(src);
        d->detail.copy.dst_kind = (uint8_t)sp__gpu_memory_kind_parse(dst);
        snprintf(out, size, "MEMCPY_%s", sp__gpu_copy_kind_name(d->detail.copy.copy_kind));
    } else {
        if (strncmp(name, "Memset (", 8) == 0 && closed)
            span_text(name + 8, name + len - 1, dst, sizeof dst);
        d->detail.set.memory_kind = (uint8_t)sp__gpu_memory_kind_parse(dst);
        snprintf(out, size, "MEMSET");
    }
}

int sp__cuda_add(sp__builder *b, const sp__cuda_args *a, sp_event_type type, int driver,
                 int64_t pid, int64_t tid, const char *name, int64_t start, int64_t end)
{
    if (a->bad || !a->has_correlation) return 1;
    sp__names *names = &b->r->names;
    if (type == SP_EVENT_CUDA_RUNTIME) {
        sp__thread *t = sp__builder_thread(b, (uint64_t)tid);
        sp__runtime *rt = t ? sp__builder_runtime(b, t) : NULL;
        if (!rt) return -1;
        rt->start_ns = start;
        rt->end_ns = end;
        rt->name = sp__names_from_bytes(names, name, strlen(name));
        rt->correlation = (uint32_t)a->correlation;
        rt->cbid = (uint32_t)a->cbid;
        rt->driver = (uint8_t)driver;
        return 0;
    }
    sp__device_rec *d = sp__builder_device(b, UINT64_MAX); /* file order */
    if (!d) return -1;
    d->start_ns = start;
    d->end_ns = end;
    d->type = (uint8_t)type;
    /* pid is the device and tid the stream; the args repeat them. */
    d->device = (uint32_t)(a->has_device ? a->device : pid);
    d->context = (uint32_t)(a->has_context ? a->context : 0);
    d->stream = (uint32_t)(a->has_stream ? a->stream : tid);
    d->correlation = (uint32_t)a->correlation;
    if (type == SP_EVENT_KERNEL) {
        sp__kernel_detail *k = &d->detail.kernel;
        memcpy(k->grid, a->grid, sizeof k->grid);
        memcpy(k->block, a->block, sizeof k->block);
        k->registers = (uint32_t)a->registers;
        k->static_shared = (uint32_t)a->shared; /* written as static + dynamic */
        k->queued_ns = (uint64_t)a->queued;
        d->name = sp__names_from_bytes(names, name, strlen(name));
        return 0;
    }
    char recorded[48];
    copy_kinds(name, d, recorded, sizeof recorded);
    d->bytes = (uint64_t)a->bytes;
    d->name = sp__names_from_bytes(names, recorded, strlen(recorded));
    return 0;
}

/* ------------------------------------------------------ deviceProperties */

/* The numeric keys of a device's object, as json_gpu.c writes them
 * (Kineto's names), and the field each fills. */
static const struct prop_key {
    const char *key;
    size_t offset;
    int wide; /* a uint64_t field, else uint32_t */
} prop_keys[] = {
    {"id", offsetof(sp__device_props, id), 0},
    {"totalGlobalMem", offsetof(sp__device_props, total_global_mem), 1},
    {"computeMajor", offsetof(sp__device_props, compute_major), 0},
    {"computeMinor", offsetof(sp__device_props, compute_minor), 0},
    {"maxThreadsPerBlock", offsetof(sp__device_props, max_threads_per_block), 0},
    {"maxThreadsPerMultiprocessor", offsetof(sp__device_props, max_threads_per_sm), 0},
    {"regsPerBlock", offsetof(sp__device_props, regs_per_block), 0},
    {"regsPerMultiprocessor", offsetof(sp__device_props, regs_per_sm), 0},
    {"warpSize", offsetof(sp__device_props, warp_size), 0},
    {"sharedMemPerBlock", offsetof(sp__device_props, shared_per_block), 1},
    {"sharedMemPerMultiprocessor", offsetof(sp__device_props, shared_per_sm), 1},
    {"sharedMemPerBlockOptin", offsetof(sp__device_props, shared_per_block_optin), 1},
    {"numSms", offsetof(sp__device_props, num_sms), 0},
};

/* One device's object. */
static int read_device(sp__jlex *lx, sp__device_props *p, int *ok)
{
    memset(p, 0, sizeof *p);
    int has_id = 0;
    *ok = 1;
    if (sp__jlex_peek(lx) != '{') {
        *ok = 0;
        return sp__jlex_skip(lx);
    }
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') {
        *ok = 0;
        return sp__jlex_expect(lx, '}');
    }
    int more = 1;
    while (more == 1) {
        char key[40];
        if (sp__jlex_string(lx) != 0) return -1;
        snprintf(key, sizeof key, "%s", lx->tok.data ? lx->tok.data : "");
        if (sp__jlex_expect(lx, ':') != 0) return -1;
        int c = sp__jlex_peek(lx);
        if (strcmp(key, "name") == 0 && c == '"') {
            if (sp__jlex_string(lx) != 0) return -1;
            snprintf(p->name, sizeof p->name, "%s", lx->tok.data ? lx->tok.data : "");
        } else if (c >= '0' && c <= '9') {
            if (sp__jlex_number(lx) != 0) return -1;
            unsigned long long v = strtoull(lx->tok.data, NULL, 10);
            uint32_t v32 = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
            for (size_t i = 0; i < sizeof prop_keys / sizeof *prop_keys; i++) {
                if (strcmp(key, prop_keys[i].key) != 0) continue;
                char *field = (char *)p + prop_keys[i].offset;
                if (prop_keys[i].wide)
                    memcpy(field, &v, sizeof(uint64_t));
                else
                    memcpy(field, &v32, sizeof v32);
            }
            has_id |= strcmp(key, "id") == 0;
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        more = sp__jlex_next(lx, '}');
    }
    if (!has_id) *ok = 0;
    return more < 0 ? -1 : 0;
}

int sp__cuda_read_props(sp__jlex *lx, sp_result *r, uint64_t *skipped)
{
    if (sp__jlex_peek(lx) != '[') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '[');
    if (sp__jlex_peek(lx) == ']') return sp__jlex_expect(lx, ']');
    int more = 1;
    while (more == 1) {
        sp__device_props p;
        int ok;
        if (read_device(lx, &p, &ok) != 0) return -1;
        for (size_t i = 0; ok && i < r->device_prop_count; i++)
            if (r->device_props[i].id == p.id) ok = 0; /* the first of an id wins */
        if (!ok) {
            (*skipped)++;
        } else {
            sp__device_props *grown =
                sp__realloc(r->device_props, sizeof *grown * (r->device_prop_count + 1));
            if (!grown) {
                if (lx->status == SP_OK) lx->status = sp__fail(SP_ENOMEM, "out of memory loading %s", lx->path);
                return -1;
            }
            r->device_props = grown;
            r->device_props[r->device_prop_count++] = p;
        }
        more = sp__jlex_next(lx, ']');
    }
    return more < 0 ? -1 : 0;
}
