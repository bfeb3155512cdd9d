/* test_cupti_records.c: CUPTI activity records built by hand from the
 * installed headers go through the conversion of cupti_records.c: kernel
 * launch fields, copy and memory kinds with paddle's names, memsets, API
 * calls (names, tid, correlation, cbid), the noisy callback ids and the
 * recorder's own synchronisation dropped, kernels without timestamps
 * counted, demangled kernel names, external correlation ids joined to their
 * calls, and a buffer walk that stops at an
 * invalid or truncated tail (with a walker of the test's own, and with
 * libcupti's where it loads). Without CUPTI's headers the test is skipped. */
#ifndef SP_HAVE_CUPTI
#include <stdio.h>

int main(void)
{
    printf("skip: built without CUPTI's headers\n");
    return 77;
}
#else

#include "check.h"
#include "cupti_load.h"
#include "cupti_records.h"
#include "sys.h"

#include <dlfcn.h>
#include <stdalign.h>

static CUpti_ActivityKernel10 kernel_rec(const char *name, uint64_t start, uint64_t end, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.start = start, k.end = end;
    k.correlationId = corr;
    k.deviceId = 1, k.contextId = 2, k.streamId = 7;
    k.gridX = 128, k.gridY = 2, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 4096;
    k.dynamicSharedMemory = 1024;
    k.localMemoryPerThread = 16;
    k.localMemoryTotal = 65536;
    k.queued = CUPTI_TIMESTAMP_UNKNOWN;
    k.submitted = 95;
    return k;
}

static CUpti_ActivityAPI api_rec(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end,
                                 uint32_t tid, uint32_t corr)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.cbid = cbid;
    a.start = start, a.end = end;
    a.processId = 1, a.threadId = tid;
    a.correlationId = corr;
    return a;
}

static CUpti_ActivityMemcpy6 memcpy_rec(uint8_t copy, uint8_t src, uint8_t dst, uint64_t bytes)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = copy, m.srcKind = src, m.dstKind = dst;
    m.bytes = bytes;
    m.start = 10, m.end = 20;
    m.deviceId = 0, m.contextId = 1, m.streamId = 13;
    m.correlationId = 77;
    return m;
}

static const char *fake_namer(void *ctx, int driver, uint32_t cbid)
{
    (void)ctx;
    if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) return "cudaLaunchKernel_v7000";
    if (driver && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) return "cuLaunchKernel";
    return NULL;
}

static void test_cupti_records_kernel_fields(void)
{
    sp__gpu_store s = {0};
    CUpti_ActivityKernel10 k = kernel_rec("plain_kernel", 100, 250, 42);
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&k));
    CHECK_EQ(1, s.count);
    const sp__gpu_record *r = &s.records[0];
    CHECK_EQ(SP__GPU_KERNEL, r->kind);
    CHECK_STR_EQ("plain_kernel", r->name);
    CHECK(r->name != k.name); /* interned: lives with the batch, not CUPTI */
    CHECK_U64_EQ(100, r->start);
    CHECK_U64_EQ(250, r->end);
    CHECK_EQ(42, r->correlation);
    CHECK_EQ(1, r->device);
    CHECK_EQ(2, r->context);
    CHECK_EQ(7, r->stream);
    const sp__kernel_detail *d = &r->detail.kernel;
    CHECK_EQ(128, d->grid[0]);
    CHECK_EQ(2, d->grid[1]);
    CHECK_EQ(1, d->grid[2]);
    CHECK_EQ(256, d->block[0]);
    CHECK_EQ(1, d->block[1]);
    CHECK_EQ(1, d->block[2]);
    CHECK_EQ(40, d->registers);
    CHECK_EQ(4096, d->static_shared);
    CHECK_EQ(1024, d->dynamic_shared);
    CHECK_EQ(16, d->local_per_thread);
    CHECK_EQ(65536, d->local_total);
    CHECK_U64_EQ(0, d->queued_ns); /* CUPTI_TIMESTAMP_UNKNOWN */
    CHECK_U64_EQ(95, d->submitted_ns);
    sp__gpu_store_fini(&s);
    CHECK(s.records == NULL && s.names == NULL);
}

static void test_cupti_records_zero_timestamp_kernels_counted(void)
{
    sp__gpu_store s = {0};
    CUpti_ActivityKernel10 a = kernel_rec("k", 0, 0, 1), b = kernel_rec("k", 5, 0, 2),
                           c = kernel_rec("k", 0, 9, 3), ok = kernel_rec("k", 5, 9, 4);
    CHECK_EQ(0, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&a));
    CHECK_EQ(0, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&b));
    CHECK_EQ(0, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&c));
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&ok));
    CHECK_EQ(1, s.count);
    CHECK_U64_EQ(3, s.zero_timestamp);
    sp__gpu_store_fini(&s);
}

static void test_cupti_records_demangles_kernel_names(void)
{
    /* The test binary has no C++ runtime; load one as Python loads a
     * framework's, RTLD_LOCAL, where dlsym(RTLD_DEFAULT) does not see it
     * (kernel names of torch stayed mangled so on a real GPU). */
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    sp__gpu_store s = {0};
    CUpti_ActivityKernel10 k1 = kernel_rec("_Z6kernelPfi", 1, 2, 1), k2 = kernel_rec("_Z6kernelPfi", 3, 4, 2),
                           k3 = kernel_rec("_Zbroken(", 5, 6, 3), k4 = kernel_rec(NULL, 7, 8, 4);
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&k1));
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&k2));
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&k3));
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&k4));
    if (cxx)
        CHECK_STR_EQ("kernel(float*, int)", s.records[0].name);
    else
        CHECK_STR_EQ("_Z6kernelPfi", s.records[0].name); /* no demangler: kept as is */
    CHECK(s.records[0].name == s.records[1].name);      /* demangled once, stored once */
    CHECK_STR_EQ("_Zbroken(", s.records[2].name);       /* not demanglable: kept */
    CHECK_STR_EQ("(unnamed kernel)", s.records[3].name);
    sp__gpu_store_fini(&s);
    if (cxx) dlclose(cxx);
}

static void test_cupti_records_memcpy_kinds_and_names(void)
{
    static const struct {
        uint8_t cupti;
        const char *name, *kind;
    } cases[] = {
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, "MEMCPY_HtoD", "HtoD"}, {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "MEMCPY_DtoH", "DtoH"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, "MEMCPY_HtoA", "HtoA"}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, "MEMCPY_AtoH", "AtoH"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, "MEMCPY_AtoA", "AtoA"}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, "MEMCPY_AtoD", "AtoD"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, "MEMCPY_DtoA", "DtoA"}, {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, "MEMCPY_DtoD", "DtoD"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, "MEMCPY_HtoH", "HtoH"}, {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, "MEMCPY_PtoP", "PtoP"},
        {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, "MEMCPY_Unknown", "Unknown"}, {200, "MEMCPY_Unknown", "Unknown"},
    };
    sp__gpu_store s = {0};
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        CUpti_ActivityMemcpy6 m = memcpy_rec(cases[i].cupti, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                             CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1000 + i);
        CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&m));
    }
    CHECK_EQ(n, s.count);
    for (size_t i = 0; i < s.count; i++) {
        const sp__gpu_record *r = &s.records[i];
        CHECK_EQ(SP__GPU_MEMCPY, r->kind);
        CHECK_STR_EQ(cases[i].name, r->name);
        CHECK_STR_EQ(cases[i].kind, sp__gpu_copy_kind_name(r->detail.copy.copy_kind));
        CHECK_STR_EQ("Pinned", sp__gpu_memory_kind_name(r->detail.copy.src_kind));
        CHECK_STR_EQ("Device", sp__gpu_memory_kind_name(r->detail.copy.dst_kind));
        CHECK_U64_EQ(1000 + i, r->bytes);
        CHECK_EQ(77, r->correlation);
        CHECK_EQ(13, r->stream);
    }
    sp__gpu_store_fini(&s);
}

static void test_cupti_records_memory_kinds(void)
{
    static const char *const names[] = {"Unknown", "Pageable", "Pinned", "Device", "Array",
                                        "Managed", "Device Static", "Managed Static"};
    for (unsigned k = 0; k < 8; k++) CHECK_STR_EQ(names[k], sp__gpu_memory_kind_name(sp__cupti_memory_kind(k)));
    CHECK_STR_EQ("Unknown", sp__gpu_memory_kind_name(sp__cupti_memory_kind(99)));
}

static void test_cupti_records_memset(void)
{
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = 0xff;
    m.bytes = 4096;
    m.start = 30, m.end = 31;
    m.deviceId = 3, m.contextId = 4, m.streamId = 5, m.correlationId = 6;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    sp__gpu_store s = {0};
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&m));
    const sp__gpu_record *r = &s.records[0];
    CHECK_EQ(SP__GPU_MEMSET, r->kind);
    CHECK_STR_EQ("MEMSET", r->name);
    CHECK_U64_EQ(4096, r->bytes);
    CHECK_EQ(0xff, r->detail.set.value);
    CHECK_STR_EQ("Managed", sp__gpu_memory_kind_name(r->detail.set.memory_kind));
    CHECK_EQ(3, r->device);
    CHECK_EQ(4, r->context);
    CHECK_EQ(5, r->stream);
    CHECK_EQ(6, r->correlation);
    sp__gpu_store_fini(&s);
}

static void test_cupti_records_api_calls(void)
{
    sp__cupti_convert c = {.api_name = fake_namer};
    sp__gpu_store s = {0};
    CUpti_ActivityAPI rt = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                   50, 60, 4321, 42);
    CUpti_ActivityAPI dr = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 52, 58, 4321, 43);
    CUpti_ActivityAPI unnamed = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, 9999, 70, 71, 4322, 44);
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&rt));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&dr));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&unnamed));
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&dr));
    CHECK_EQ(4, s.count);
    CHECK_EQ(SP__GPU_RUNTIME, s.records[0].kind);
    CHECK_STR_EQ("cudaLaunchKernel_v7000", s.records[0].name);
    CHECK_U64_EQ(4321, s.records[0].tid);
    CHECK_EQ(42, s.records[0].correlation);
    CHECK_EQ(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, s.records[0].cbid);
    CHECK_U64_EQ(50, s.records[0].start);
    CHECK_U64_EQ(60, s.records[0].end);
    CHECK_EQ(SP__GPU_DRIVER, s.records[1].kind);
    CHECK_STR_EQ("cuLaunchKernel", s.records[1].name);
    CHECK_EQ(43, s.records[1].correlation);
    CHECK_STR_EQ("runtime_cbid_9999", s.records[2].name); /* CUPTI knows no name */
    CHECK_STR_EQ("driver_cbid_307", s.records[3].name);   /* no namer at all */
    CHECK_EQ(307, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    sp__gpu_store_fini(&s);
}

static void test_cupti_records_noisy_and_own_sync_filtered(void)
{
    sp__cupti_convert c = {.api_name = fake_namer, .skip_tid = 99, .skip_start = 1000, .skip_end = 2000};
    sp__gpu_store s = {0};
    for (size_t i = 0; i < sp__cupti_noisy_runtime_count; i++) {
        CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, sp__cupti_noisy_runtime[i], 1, 2, 5, 1);
        CHECK_EQ(0, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&a));
    }
    for (size_t i = 0; i < sp__cupti_noisy_driver_count; i++) {
        CUpti_ActivityAPI a = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, sp__cupti_noisy_driver[i], 1, 2, 5, 1);
        CHECK_EQ(0, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&a));
    }
    CHECK(sp__cupti_is_noisy(0, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    CHECK(sp__cupti_is_noisy(0, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020));
    CHECK(sp__cupti_is_noisy(1, CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes));
    CHECK(!sp__cupti_is_noisy(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    CHECK(!sp__cupti_is_noisy(1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
    /* The recorder's own sync: thread 99 inside [1000, 2000]. */
    CUpti_ActivityAPI own = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 1100, 1900, 99, 2);
    CUpti_ActivityAPI other = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 1100, 1900, 98, 3);
    CUpti_ActivityAPI later = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 2100, 2200, 99, 4);
    CHECK_EQ(0, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&own));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&other));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&later));
    CHECK_EQ(2, s.count);
    CHECK_U64_EQ(sp__cupti_noisy_runtime_count + sp__cupti_noisy_driver_count + 1, s.filtered);
    sp__gpu_store_fini(&s);
}

static void test_cupti_records_other_kinds_ignored(void)
{
    CUpti_Activity a = {.kind = CUPTI_ACTIVITY_KIND_OVERHEAD};
    sp__gpu_store s = {0};
    CHECK_EQ(0, sp__cupti_convert_one(&s, NULL, &a));
    CHECK_EQ(0, s.count);
    sp__gpu_store_fini(&s);
}

static CUpti_ActivityExternalCorrelation external_rec(CUpti_ExternalCorrelationKind kind, uint64_t id,
                                                      uint32_t correlation)
{
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = kind;
    x.externalId = id;
    x.correlationId = correlation;
    return x;
}

/* External records of stepprof's kind tag the API call of their
 * correlation id, whichever buffer order they came in; other tools' kinds
 * (Kineto's CUSTOM0) and device records are left alone; a call without a
 * tag keeps 0; linking forgets the tags. */
static void test_cupti_records_external_ids_link_to_calls(void)
{
    sp__cupti_convert c = {.api_name = fake_namer};
    sp__gpu_store s = {0};
    CUpti_ActivityExternalCorrelation ours = external_rec(SP__CUPTI_EXTERNAL_KIND, 123456789, 42);
    CUpti_ActivityExternalCorrelation kineto = external_rec(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 77, 43);
    CUpti_ActivityExternalCorrelation late = external_rec(SP__CUPTI_EXTERNAL_KIND, 987, 44);
    CUpti_ActivityAPI tagged = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                       50, 60, 4321, 42);
    CUpti_ActivityAPI other = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                      61, 62, 4321, 43);
    CUpti_ActivityAPI driver = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 63, 64, 4321, 44);
    CUpti_ActivityKernel10 k = kernel_rec("k", 70, 80, 42);
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&ours));
    CHECK_EQ(0, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&kineto));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&tagged));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&other));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&driver));
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&late)); /* after its call */
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&k));
    CHECK_EQ(2, s.external_count);
    sp__gpu_store_link_external(&s);
    CHECK_EQ(4, s.count);
    CHECK_U64_EQ(123456789, s.records[0].external);
    CHECK_U64_EQ(0, s.records[1].external);
    CHECK_U64_EQ(987, s.records[2].external);
    CHECK_U64_EQ(0, s.records[3].external); /* the kernel shares 42, but is not a call */
    CHECK_EQ(0, s.external_count);
    CHECK(s.externals == NULL);
    sp__gpu_store_link_external(&s); /* nothing left: no change */
    CHECK_U64_EQ(123456789, s.records[0].external);
    /* Out of memory for a tag: the call stays untagged, nothing counted. */
    sp__gpu_store_fini(&s);
    sp__alloc_fail_at(1);
    CHECK_EQ(-1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&ours));
    sp__alloc_fail_at(0);
    CHECK_U64_EQ(0, s.discarded_records);
    CHECK_EQ(1, sp__cupti_convert_one(&s, &c, (const CUpti_Activity *)&tagged));
    sp__gpu_store_link_external(&s);
    CHECK_U64_EQ(0, s.records[0].external);
    sp__gpu_store_fini(&s);
}

static void test_cupti_records_out_of_memory_counted(void)
{
    sp__gpu_store s = {0};
    CUpti_ActivityKernel10 k = kernel_rec("k", 1, 2, 1);
    sp__alloc_fail_at(1); /* the names store */
    CHECK_EQ(-1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&k));
    sp__alloc_fail_at(0);
    CHECK_U64_EQ(1, s.discarded_records);
    CHECK_EQ(0, s.count);
    CUpti_ActivityMemcpy6 m = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1, 3, 8);
    sp__alloc_fail_at(1); /* the record array */
    CHECK_EQ(-1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&m));
    sp__alloc_fail_at(0);
    CHECK_U64_EQ(2, s.discarded_records);
    CHECK_EQ(1, sp__cupti_convert_one(&s, NULL, (const CUpti_Activity *)&k));
    CHECK_EQ(1, s.count);
    sp__gpu_store_fini(&s);
}

/* ---- buffer walks ---- */

static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    default: return 0;
    }
}

/* cuptiActivityGetNextRecord for the kinds above, as CUPTI documents it. */
static CUptiResult fake_next(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
    size_t off = *rec ? (size_t)((uint8_t *)*rec - buffer) + record_size((*rec)->kind) : 0;
    if (off + sizeof(CUpti_Activity) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    CUpti_Activity *a = (CUpti_Activity *)(void *)(buffer + off);
    size_t size = record_size(a->kind);
    if (size == 0 || off + size > valid) return CUPTI_ERROR_INVALID_KIND;
    *rec = a;
    return CUPTI_SUCCESS;
}

static alignas(8) uint8_t buffer[4096];

/* Lays out kernel, runtime, memcpy, memset, driver, then an invalid record;
 * returns the bytes up to the end of the driver record. */
static size_t fill_buffer(void)
{
    memset(buffer, 0, sizeof buffer);
    size_t off = 0;
    CUpti_ActivityKernel10 k = kernel_rec("_Z6kernelPfi", 10, 20, 1);
    CUpti_ActivityAPI rt = api_rec(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 5, 8, 11, 1);
    CUpti_ActivityMemcpy6 m = memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 3, 2, 64);
    CUpti_ActivityMemset4 ms;
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET, ms.start = 40, ms.end = 41;
    CUpti_ActivityAPI dr = api_rec(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 6, 7, 11, 1);
    memcpy(buffer + off, &k, sizeof k), off += sizeof k;
    memcpy(buffer + off, &rt, sizeof rt), off += sizeof rt;
    memcpy(buffer + off, &m, sizeof m), off += sizeof m;
    memcpy(buffer + off, &ms, sizeof ms), off += sizeof ms;
    memcpy(buffer + off, &dr, sizeof dr), off += sizeof dr;
    return off; /* then zeros: kind INVALID */
}

static void check_walk(sp__cupti_next_fn next)
{
    sp__cupti_convert c = {.api_name = fake_namer};
    size_t five = fill_buffer();
    /* An invalid record after the five. */
    sp__gpu_store s = {0};
    CHECK_EQ(5, sp__cupti_walk(&s, &c, next, buffer, five + sizeof(CUpti_ActivityAPI)));
    CHECK_EQ(5, s.count);
    if (s.count == 5) {
        CHECK_EQ(SP__GPU_KERNEL, s.records[0].kind);
        CHECK_EQ(SP__GPU_RUNTIME, s.records[1].kind);
        CHECK_STR_EQ("MEMCPY_DtoH", s.records[2].name);
        CHECK_STR_EQ("MEMSET", s.records[3].name);
        CHECK_STR_EQ("cuLaunchKernel", s.records[4].name);
    }
    sp__gpu_store_fini(&s);
    /* The driver record cut in half: four records. */
    CHECK_EQ(4, sp__cupti_walk(&s, &c, next, buffer, five - sizeof(CUpti_ActivityAPI) / 2));
    CHECK_EQ(4, s.count);
    sp__gpu_store_fini(&s);
    /* Counting only (the discard buffer), an empty buffer, no buffer. */
    CHECK_EQ(5, sp__cupti_walk(NULL, NULL, next, buffer, five));
    CHECK_EQ(0, sp__cupti_walk(&s, &c, next, buffer, 0));
    CHECK_EQ(0, sp__cupti_walk(&s, &c, next, NULL, five));
    CHECK_EQ(0, s.count);
    sp__gpu_store_fini(&s);
}

static void test_cupti_records_walk_stops_at_bad_tail(void)
{
    check_walk(fake_next);
}

static void test_cupti_records_walk_with_libcupti(void)
{
    sp__cupti_api api;
    char why[512];
    if (sp__cupti_load(&api, why, sizeof why) != 0) {
        printf("note: no libcupti, walk with libcupti not run: %s\n", why);
        return;
    }
    printf("note: libcupti API version %u\n", (unsigned)api.version);
    /* libcupti sizes records by its own version; the headers must agree. */
    if (api.version / 100 == CUPTI_API_VERSION / 100) check_walk(api.ActivityGetNextRecord);
    const char *name = NULL;
    CHECK_EQ(CUPTI_SUCCESS, api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name));
    CHECK_STR_EQ("cudaLaunchKernel_v7000", name);
}

int main(void)
{
    RUN_TEST(test_cupti_records_kernel_fields);
    RUN_TEST(test_cupti_records_zero_timestamp_kernels_counted);
    RUN_TEST(test_cupti_records_demangles_kernel_names);
    RUN_TEST(test_cupti_records_memcpy_kinds_and_names);
    RUN_TEST(test_cupti_records_memory_kinds);
    RUN_TEST(test_cupti_records_memset);
    RUN_TEST(test_cupti_records_api_calls);
    RUN_TEST(test_cupti_records_noisy_and_own_sync_filtered);
    RUN_TEST(test_cupti_records_other_kinds_ignored);
    RUN_TEST(test_cupti_records_external_ids_link_to_calls);
    RUN_TEST(test_cupti_records_out_of_memory_counted);
    RUN_TEST(test_cupti_records_walk_stops_at_bad_tail);
    RUN_TEST(test_cupti_records_walk_with_libcupti);
    return TEST_SUMMARY();
}

#endif /* SP_HAVE_CUPTI */
