/* cupti_records.c: converts CUPTI activity records (CONCURRENT_KERNEL,
 * MEMCPY, MEMSET, RUNTIME, DRIVER) into sp__gpu_record, free of CUPTI's
 * types, and joins EXTERNAL_CORRELATION records to the API calls they tag. cupti_tracer.c calls it from CUPTI's buffer-completion callback
 * under its store lock; the tests call it on hand-made records. Only the
 * leading fields that every record version since CUDA 12.0 shares are read
 * (Kernel9/10/11, Memcpy5/6, Memset4 agree on them), so a newer libcupti
 * than the headers still converts. Kernel names are demangled and every name
 * is interned in the store's names, which travel with the batch. */
#ifdef SP_HAVE_CUPTI

#include "cupti_records.h"
#include "sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint32_t sp__cupti_noisy_runtime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
};
const size_t sp__cupti_noisy_runtime_count = sizeof sp__cupti_noisy_runtime / sizeof sp__cupti_noisy_runtime[0];

const uint32_t sp__cupti_noisy_driver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
};
const size_t sp__cupti_noisy_driver_count = sizeof sp__cupti_noisy_driver / sizeof sp__cupti_noisy_driver[0];

int sp__cupti_is_noisy(int driver, uint32_t cbid)
{
    const uint32_t *ids = driver ? sp__cupti_noisy_driver : sp__cupti_noisy_runtime;
    size_t count = driver ? sp__cupti_noisy_driver_count : sp__cupti_noisy_runtime_count;
    for (size_t i = 0; i < count; i++)
        if (ids[i] == cbid) return 1;
    return 0;
}

uint8_t sp__cupti_copy_kind(unsigned k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return 0;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return 1;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return 2;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return 3;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return 4;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return 5;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return 6;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return 7;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return 8;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return 9;
    default: return SP__GPU_COPY_KINDS - 1; /* "Unknown" */
    }
}

uint8_t sp__cupti_memory_kind(unsigned k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return 0;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return 1;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return 2;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return 3;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return 4;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return 5;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return 6;
    default: return SP__GPU_MEMORY_KINDS - 1; /* "Unknown" */
    }
}

/* paddle's names for copies, in kinds.c's order. */
static const char *const memcpy_names[SP__GPU_COPY_KINDS] = {
    "MEMCPY_HtoD", "MEMCPY_DtoH", "MEMCPY_HtoA", "MEMCPY_AtoH", "MEMCPY_AtoA", "MEMCPY_AtoD",
    "MEMCPY_DtoA", "MEMCPY_DtoD", "MEMCPY_HtoH", "MEMCPY_PtoP", "MEMCPY_Unknown",
};

void sp__gpu_store_fini(sp__gpu_store *s)
{
    sp__free(s->records);
    sp__free(s->externals);
    sp__gpu_names_destroy(s->names);
    memset(s, 0, sizeof *s);
}

/* A fresh record at the end of the store, or NULL (counted) when memory
 * runs out. */
static sp__gpu_record *push(sp__gpu_store *s)
{
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        sp__gpu_record *r = sp__realloc(s->records, sizeof *r * cap);
        if (!r) {
            s->discarded_records++;
            return NULL;
        }
        s->records = r;
        s->cap = cap;
    }
    sp__gpu_record *r = &s->records[s->count];
    memset(r, 0, sizeof *r);
    return r;
}

static int ensure_names(sp__gpu_store *s)
{
    if (!s->names) s->names = sp__gpu_names_create();
    if (s->names) return 0;
    s->discarded_records++;
    return -1;
}

static uint32_t dim(int32_t v) { return v > 0 ? (uint32_t)v : 0; }

static int kernel(sp__gpu_store *s, const CUpti_ActivityKernel10 *k)
{
    if (k->start == 0 || k->end == 0) {
        s->zero_timestamp++; /* CUPTI's device buffer ran out: no times */
        return 0;
    }
    if (ensure_names(s) != 0) return -1;
    sp__gpu_record *r = push(s);
    if (!r) return -1;
    const char *name = k->name ? sp__gpu_names_kernel(s->names, k->name) : "(unnamed kernel)";
    if (!name) {
        s->discarded_records++;
        return -1;
    }
    r->start = k->start;
    r->end = k->end;
    r->name = name;
    r->kind = SP__GPU_KERNEL;
    r->correlation = k->correlationId;
    r->device = k->deviceId;
    r->context = k->contextId;
    r->stream = k->streamId;
    sp__kernel_detail *d = &r->detail.kernel;
    d->grid[0] = dim(k->gridX), d->grid[1] = dim(k->gridY), d->grid[2] = dim(k->gridZ);
    d->block[0] = dim(k->blockX), d->block[1] = dim(k->blockY), d->block[2] = dim(k->blockZ);
    d->registers = k->registersPerThread;
    d->static_shared = dim(k->staticSharedMemory);
    d->dynamic_shared = dim(k->dynamicSharedMemory);
    d->local_per_thread = k->localMemoryPerThread;
    d->local_total = k->localMemoryTotal;
    d->queued_ns = k->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->queued;
    d->submitted_ns = k->submitted == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->submitted;
    s->count++;
    return 1;
}

static int memcpy_record(sp__gpu_store *s, const CUpti_ActivityMemcpy6 *m)
{
    if (m->start == 0 || m->end == 0) {
        s->zero_timestamp++;
        return 0;
    }
    sp__gpu_record *r = push(s);
    if (!r) return -1;
    uint8_t kind = sp__cupti_copy_kind(m->copyKind);
    r->start = m->start;
    r->end = m->end;
    r->name = memcpy_names[kind]; /* static: outlives every batch */
    r->kind = SP__GPU_MEMCPY;
    r->correlation = m->correlationId;
    r->device = m->deviceId;
    r->context = m->contextId;
    r->stream = m->streamId;
    r->bytes = m->bytes;
    r->detail.copy.copy_kind = kind;
    r->detail.copy.src_kind = sp__cupti_memory_kind(m->srcKind);
    r->detail.copy.dst_kind = sp__cupti_memory_kind(m->dstKind);
    s->count++;
    return 1;
}

static int memset_record(sp__gpu_store *s, const CUpti_ActivityMemset4 *m)
{
    if (m->start == 0 || m->end == 0) {
        s->zero_timestamp++;
        return 0;
    }
    sp__gpu_record *r = push(s);
    if (!r) return -1;
    r->start = m->start;
    r->end = m->end;
    r->name = "MEMSET";
    r->kind = SP__GPU_MEMSET;
    r->correlation = m->correlationId;
    r->device = m->deviceId;
    r->context = m->contextId;
    r->stream = m->streamId;
    r->bytes = m->bytes;
    r->detail.set.memory_kind = sp__cupti_memory_kind(m->memoryKind);
    r->detail.set.value = m->value;
    s->count++;
    return 1;
}

static int api(sp__gpu_store *s, const sp__cupti_convert *c, const CUpti_ActivityAPI *a, int driver)
{
    if (sp__cupti_is_noisy(driver, a->cbid) ||
        (c && c->skip_end && a->threadId == c->skip_tid && a->start >= c->skip_start &&
         a->end <= c->skip_end)) {
        s->filtered++;
        return 0;
    }
    if (ensure_names(s) != 0) return -1;
    sp__gpu_record *r = push(s);
    if (!r) return -1;
    const char *raw = c && c->api_name ? c->api_name(c->api_ctx, driver, a->cbid) : NULL;
    char fallback[40];
    if (!raw) {
        snprintf(fallback, sizeof fallback, "%s_cbid_%u", driver ? "driver" : "runtime", (unsigned)a->cbid);
        raw = fallback;
    }
    const char *name = sp__gpu_names_intern(s->names, raw);
    if (!name) {
        s->discarded_records++;
        return -1;
    }
    r->start = a->start;
    r->end = a->end;
    r->name = name;
    r->kind = driver ? SP__GPU_DRIVER : SP__GPU_RUNTIME;
    r->correlation = a->correlationId;
    r->cbid = a->cbid;
    r->tid = a->threadId;
    s->count++;
    return 1;
}

static int external(sp__gpu_store *s, const CUpti_ActivityExternalCorrelation *x)
{
    if (x->externalKind != SP__CUPTI_EXTERNAL_KIND) return 0;
    if (s->external_count == s->external_cap) {
        size_t cap = s->external_cap ? s->external_cap * 2 : 4096;
        sp__gpu_external *e = sp__realloc(s->externals, sizeof *e * cap);
        if (!e) return -1;
        s->externals = e;
        s->external_cap = cap;
    }
    s->externals[s->external_count++] = (sp__gpu_external){x->correlationId, x->externalId};
    return 1;
}

static int by_correlation(const void *pa, const void *pb)
{
    const sp__gpu_external *a = pa, *b = pb;
    return (a->correlation > b->correlation) - (a->correlation < b->correlation);
}

void sp__gpu_store_link_external(sp__gpu_store *s)
{
    if (s->external_count) {
        qsort(s->externals, s->external_count, sizeof *s->externals, by_correlation);
        for (size_t i = 0; i < s->count; i++) {
            sp__gpu_record *r = &s->records[i];
            if (r->kind != SP__GPU_RUNTIME && r->kind != SP__GPU_DRIVER) continue;
            sp__gpu_external key = {r->correlation, 0};
            const sp__gpu_external *x =
                bsearch(&key, s->externals, s->external_count, sizeof key, by_correlation);
            if (x) r->external = x->id;
        }
    }
    sp__free(s->externals);
    s->externals = NULL;
    s->external_count = s->external_cap = 0;
}

int sp__cupti_convert_one(sp__gpu_store *s, const sp__cupti_convert *c, const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: /* never enabled; same layout */
        return kernel(s, (const CUpti_ActivityKernel10 *)(const void *)rec);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return memcpy_record(s, (const CUpti_ActivityMemcpy6 *)(const void *)rec);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return memset_record(s, (const CUpti_ActivityMemset4 *)(const void *)rec);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return api(s, c, (const CUpti_ActivityAPI *)(const void *)rec, 0);
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return api(s, c, (const CUpti_ActivityAPI *)(const void *)rec, 1);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return external(s, (const CUpti_ActivityExternalCorrelation *)(const void *)rec);
    default:
        return 0;
    }
}

size_t sp__cupti_walk(sp__gpu_store *s, const sp__cupti_convert *c, sp__cupti_next_fn next,
                      uint8_t *buffer, size_t valid_bytes)
{
    size_t n = 0;
    if (!buffer || !next) return 0;
    CUpti_Activity *rec = NULL;
    /* Stops at CUPTI_ERROR_MAX_LIMIT_REACHED (end), CUPTI_ERROR_INVALID_KIND
     * (an incomplete record) or any other error; a record outside the valid
     * bytes would be CUPTI's bug, but is not read either. */
    while (next(buffer, valid_bytes, &rec) == CUPTI_SUCCESS && rec) {
        uint8_t *p = (uint8_t *)rec;
        if (p < buffer || p + sizeof(CUpti_Activity) > buffer + valid_bytes) break;
        n++;
        if (s) (void)sp__cupti_convert_one(s, c, rec);
    }
    return n;
}

#endif /* SP_HAVE_CUPTI */
