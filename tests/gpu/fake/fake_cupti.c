/* fake_cupti.c: a test double of CUPTI's activity API, built as libcupti.so
 * (see fake_gpu.h), compiled against the real cupti.h so every export has
 * CUPTI's signature. It models what stepprof's recorder relies on:
 *  - one subscriber (a second one, or FAKE_CUPTI_SUBSCRIBE, is refused);
 *  - activity kinds and API callback ids enabled or disabled, and only
 *    enabled records emitted;
 *  - buffers asked from the client's request callback when needed (none
 *    given: the record is dropped and counted for
 *    cuptiActivityGetNumDroppedRecords); a full buffer waits in a queue for
 *    the next cuptiActivityFlushAll, which delivers the queue (and, forced,
 *    the partly filled buffer too) through the completion callback;
 *  - times from the client's timestamp callback, else CLOCK_REALTIME, to
 *    which the skew (fake_gpu_set_skew) is added as a buffer is delivered;
 *  - per-thread stacks of external correlation ids, each id written as an
 *    EXTERNAL_CORRELATION record before the API record it covers.
 * Records are packed at 8-byte boundaries in the buffer, each as the struct
 * of its kind in cupti_activity.h (Kernel10, Memcpy6, Memset4, API,
 * ExternalCorrelation); cuptiActivityGetNextRecord walks that layout.
 *
 * Locks: `lock` guards all state and is held while calling the request
 * callback (the client's pool lock nests inside it). `flush_lock`
 * serialises flushes, so that a flush returns only once every buffer queued
 * before it was delivered, as CUPTI's blocking flush does; `lock` is never
 * held while delivering, because the client calls back into this library
 * (cuptiActivityGetNumDroppedRecords) from the completion callback. */
#define _GNU_SOURCE
#include "fake_gpu.h"

#include <cupti.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { QUEUE_MAX = 256, STACK_MAX = 32, CBID_MAX = 1024 };

typedef struct queued {
    uint8_t *buffer;
    size_t size, valid;
} queued;

struct CUpti_Subscriber_st {
    CUpti_CallbackFunc callback;
    void *userdata;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint next_correlation;

static struct {
    /* under lock */
    struct CUpti_Subscriber_st subscriber;
    int subscribed;
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    CUpti_TimestampCallbackFunc timestamp;
    CUpti_ActivityThreadIdType thread_id_type;
    uint8_t enabled[CUPTI_ACTIVITY_KIND_COUNT];
    uint8_t runtime_off[CBID_MAX], driver_off[CBID_MAX];
    uint8_t *current;
    size_t current_size, current_used;
    queued queue[QUEUE_MAX];
    size_t queue_count;
    uint64_t dropped_unread; /* since the last cuptiActivityGetNumDroppedRecords */
    int env_dropped_added;
    int skew_read;     /* skew_ns was read from the environment */
    int64_t skew_ns;   /* added to every record time at delivery, without the callback */
    uint64_t delivered; /* records delivered so far */
    fake_gpu_counts counts;
} f;

/* A thread's external correlation ids, one stack per kind. */
static __thread uint64_t external_ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][STACK_MAX];
static __thread unsigned external_depth[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

static long long env_ll(const char *name, long long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtoll(v, NULL, 10) : fallback;
}

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && strcmp(v, value) == 0;
}

/* ---- layout ---- */

static size_t record_bytes(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
    }
}

static size_t aligned(size_t n) { return (n + 7) & ~(size_t)7; }

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record)
{
    if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *p = buffer;
    if (*record) p = (uint8_t *)*record + aligned(record_bytes((*record)->kind));
    uint8_t *end = buffer + validBufferSizeBytes;
    if (p >= end || (size_t)(end - p) < sizeof(CUpti_Activity)) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    size_t n = record_bytes(((CUpti_Activity *)(void *)p)->kind);
    if (n == 0 || (size_t)(end - p) < n) return CUPTI_ERROR_INVALID_KIND;
    *record = (CUpti_Activity *)(void *)p;
    return CUPTI_SUCCESS;
}

/* ---- buffers ---- */

/* Moves the current buffer to the delivery queue. Caller holds lock. */
static void retire_locked(void)
{
    if (!f.current) return;
    if (f.queue_count < QUEUE_MAX) {
        f.queue[f.queue_count++] = (queued){f.current, f.current_size, f.current_used};
    } else { /* never in the tests: a flush would have to stay away for 256 buffers */
        f.counts.dropped += f.current_used ? 1 : 0;
    }
    f.current = NULL;
    f.current_size = f.current_used = 0;
}

static void count_locked(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME: f.counts.runtime++; break;
    case CUPTI_ACTIVITY_KIND_DRIVER: f.counts.driver++; break;
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: f.counts.kernels++; break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: f.counts.memcpys++; break;
    case CUPTI_ACTIVITY_KIND_MEMSET: f.counts.memsets++; break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: f.counts.external++; break;
    default: break;
    }
}

/* Copies one record into the current buffer, asking the client for a
 * buffer when there is none or the record does not fit. Caller holds lock. */
static void put_locked(const void *rec, CUpti_ActivityKind kind)
{
    size_t n = aligned(record_bytes(kind));
    if (f.current && f.current_size - f.current_used < n) retire_locked();
    if (!f.current && f.request) {
        uint8_t *b = NULL;
        size_t size = 0, max_records = 0;
        f.request(&b, &size, &max_records);
        f.counts.buffers_requested++;
        if (b && size >= n) f.current = b, f.current_size = size, f.current_used = 0;
    }
    if (!f.current) {
        f.counts.dropped++;
        f.dropped_unread++;
        return;
    }
    memcpy(f.current + f.current_used, rec, record_bytes(kind));
    f.current_used += n;
    count_locked(kind);
}

/* The skew of CUPTI's clock: FAKE_CUPTI_REALTIME_OFFSET_NS until a test
 * sets another. Caller holds lock. */
static int64_t skew_locked(void)
{
    if (!f.skew_read) {
        f.skew_read = 1;
        f.skew_ns = env_ll("FAKE_CUPTI_REALTIME_OFFSET_NS", 0);
    }
    return f.skew_ns;
}

static void shift(uint64_t *t, int64_t by)
{
    if (*t != 0 && *t != CUPTI_TIMESTAMP_UNKNOWN) *t += (uint64_t)by;
}

/* Adds the skew to the times of every record in a buffer about to be
 * delivered, and counts them. Records hold CLOCK_REALTIME until then, so
 * one skew, whenever it was set, applies to every record of a buffer. */
static void deliver_locked(const queued *q)
{
    int64_t by = f.timestamp ? 0 : skew_locked();
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(q->buffer, q->valid, &rec) == CUPTI_SUCCESS) {
        f.delivered++;
        if (!by) continue;
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)(void *)rec;
            shift(&a->start, by), shift(&a->end, by);
            break;
        }
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(void *)rec;
            shift(&k->start, by), shift(&k->end, by), shift(&k->completed, by);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)(void *)rec;
            shift(&m->start, by), shift(&m->end, by);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)(void *)rec;
            shift(&m->start, by), shift(&m->end, by);
            break;
        }
        default: break;
        }
    }
}

int fake_gpu_set_skew(int64_t skew_ns)
{
    pthread_mutex_lock(&lock);
    int ok = f.delivered == 0 && f.queue_count == 0;
    if (ok) f.skew_read = 1, f.skew_ns = skew_ns;
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    static queued out[QUEUE_MAX]; /* under flush_lock */
    pthread_mutex_lock(&flush_lock);
    pthread_mutex_lock(&lock);
    CUpti_BuffersCallbackCompleteFunc complete = f.complete;
    if (!complete) {
        pthread_mutex_unlock(&lock);
        pthread_mutex_unlock(&flush_lock);
        return CUPTI_ERROR_INVALID_OPERATION;
    }
    if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && f.current && f.current_used) retire_locked();
    size_t count = f.queue_count;
    memcpy(out, f.queue, sizeof *out * count);
    for (size_t i = 0; i < count; i++) deliver_locked(&out[i]);
    f.queue_count = 0;
    f.counts.buffers_delivered += count;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < count; i++) complete(NULL, 0, out[i].buffer, out[i].size, out[i].valid);
    pthread_mutex_unlock(&flush_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                       size_t *dropped)
{
    (void)context, (void)streamId;
    if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    if (!f.env_dropped_added) {
        f.env_dropped_added = 1;
        f.dropped_unread += (uint64_t)env_ll("FAKE_CUPTI_DROPPED", 0);
    }
    *dropped = (size_t)f.dropped_unread;
    f.dropped_unread = 0; /* CUPTI resets the count at each read */
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    if (!funcBufferRequested || !funcBufferCompleted) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    f.request = funcBufferRequested;
    f.complete = funcBufferCompleted;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

/* ---- time ---- */

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
    if (env_is("FAKE_CUPTI_NO_TIMESTAMP_CALLBACK", "1")) return CUPTI_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&lock);
    f.timestamp = funcTimestamp;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

static uint64_t now_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Every record time: the client's clock when it gave one (its own units,
 * whatever they are), else CLOCK_REALTIME ns; the skew is added when the
 * record is delivered (deliver_locked). */
static uint64_t stamp(void)
{
    pthread_mutex_lock(&lock);
    CUpti_TimestampCallbackFunc fn = f.timestamp;
    pthread_mutex_unlock(&lock);
    if (fn) return fn();
    return now_ns(CLOCK_REALTIME);
}

/* CUPTI's clock now: skewed, as the records will be. */
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    int64_t by = f.timestamp ? 0 : skew_locked();
    pthread_mutex_unlock(&lock);
    *timestamp = stamp() + (uint64_t)by;
    return CUPTI_SUCCESS;
}

/* ---- setup: version, names, subscription, kinds ---- */

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
    *version = (uint32_t)env_ll("FAKE_CUPTI_VERSION", 26);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
    switch (result) {
#define NAME(r) \
    case r: *str = #r; break
        NAME(CUPTI_SUCCESS);
        NAME(CUPTI_ERROR_INVALID_PARAMETER);
        NAME(CUPTI_ERROR_INVALID_OPERATION);
        NAME(CUPTI_ERROR_MAX_LIMIT_REACHED);
        NAME(CUPTI_ERROR_QUEUE_EMPTY);
        NAME(CUPTI_ERROR_INVALID_KIND);
        NAME(CUPTI_ERROR_NOT_SUPPORTED);
        NAME(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
        NAME(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
#undef NAME
    default: *str = NULL; return CUPTI_ERROR_INVALID_PARAMETER;
    }
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
    *name = NULL;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        switch (cbid) {
        case CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020: *name = "cudaGetLastError_v3020"; break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020: *name = "cudaGetDevice_v3020"; break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: *name = "cudaMemcpyAsync_v3020"; break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: *name = "cudaMemsetAsync_v3020"; break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020: *name = "cudaDeviceSynchronize_v3020"; break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: *name = "cudaLaunchKernel_v7000"; break;
        default: break;
        }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        switch (cbid) {
        case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize: *name = "cuCtxSynchronize"; break;
        case CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent: *name = "cuCtxGetCurrent"; break;
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: *name = "cuLaunchKernel"; break;
        default: break;
        }
    }
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                    void *userdata)
{
    if (!subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
    if (env_is("FAKE_CUPTI_SUBSCRIBE", "multiple")) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (env_is("FAKE_CUPTI_SUBSCRIBE", "privileges")) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    pthread_mutex_lock(&lock);
    CUptiResult r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (!f.subscribed) {
        f.subscribed = 1;
        f.subscriber = (struct CUpti_Subscriber_st){callback, userdata};
        *subscriber = &f.subscriber;
        r = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    pthread_mutex_lock(&lock);
    CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
    if (f.subscribed && subscriber == &f.subscriber) f.subscribed = 0, r = CUPTI_SUCCESS;
    pthread_mutex_unlock(&lock);
    return r;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, uint8_t on)
{
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT || kind == CUPTI_ACTIVITY_KIND_INVALID)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&lock);
    f.enabled[kind] = on;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) { return set_kind(kind, 1); }

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) { return set_kind(kind, 0); }

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    f.thread_id_type = type;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

static CUptiResult set_cbid(uint8_t *off, uint32_t size, CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid == 0 || cbid >= size || cbid >= CBID_MAX) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    if (off[cbid] != !enable) {
        off[cbid] = !enable;
        if (enable)
            f.counts.disabled_cbids--;
        else
            f.counts.disabled_cbids++;
    }
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return set_cbid(f.runtime_off, CUPTI_RUNTIME_TRACE_CBID_SIZE, cbid, enable);
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return set_cbid(f.driver_off, CUPTI_DRIVER_TRACE_CBID_SIZE, cbid, enable);
}

/* ---- external correlation ---- */

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (external_depth[kind] >= STACK_MAX) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    external_ids[kind][external_depth[kind]++] = id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (external_depth[kind] == 0) return CUPTI_ERROR_QUEUE_EMPTY;
    uint64_t id = external_ids[kind][--external_depth[kind]];
    if (lastId) *lastId = id;
    return CUPTI_SUCCESS;
}

/* ---- the "device": what a launch emits ---- */

/* An API call of the calling thread: its external correlation records
 * (one per kind with a pushed id), then its own record, unless the kind or
 * the cbid is disabled. */
static void emit_api(int driver, uint32_t cbid, uint32_t correlation, uint64_t start, uint64_t end)
{
    CUpti_ActivityKind kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
    uint32_t pid = (uint32_t)getpid(), tid_system = (uint32_t)syscall(SYS_gettid);
    uint32_t tid_default = (uint32_t)(uintptr_t)pthread_self();
    pthread_mutex_lock(&lock);
    const uint8_t *off = driver ? f.driver_off : f.runtime_off;
    if (!f.enabled[kind]) goto done;
    if (cbid < CBID_MAX && off[cbid]) {
        f.counts.suppressed++;
        goto done;
    }
    if (f.enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]) {
        for (int k = CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
            if (!external_depth[k]) continue;
            CUpti_ActivityExternalCorrelation x = {0};
            x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            x.externalKind = (CUpti_ExternalCorrelationKind)k;
            x.externalId = external_ids[k][external_depth[k] - 1];
            x.correlationId = correlation;
            put_locked(&x, x.kind);
        }
    }
    CUpti_ActivityAPI a = {0};
    a.kind = kind;
    a.cbid = cbid;
    a.start = start;
    a.end = end;
    a.processId = pid;
    a.threadId = f.thread_id_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? tid_system : tid_default;
    a.correlationId = correlation;
    put_locked(&a, kind);
done:
    pthread_mutex_unlock(&lock);
}

/* A device record, if its kind is enabled. */
static void emit_device(const CUpti_Activity *rec)
{
    pthread_mutex_lock(&lock);
    if (f.enabled[rec->kind]) put_locked(rec, rec->kind);
    pthread_mutex_unlock(&lock);
}

static uint32_t api_call(uint32_t cbid)
{
    uint32_t correlation = atomic_fetch_add(&next_correlation, 1) + 1;
    uint64_t start = stamp();
    uint64_t end = stamp();
    emit_api(0, cbid, correlation, start, end);
    return correlation;
}

static void spin(uint64_t ns)
{
    uint64_t until = now_ns(CLOCK_MONOTONIC) + ns;
    while (now_ns(CLOCK_MONOTONIC) < until) {
    }
}

uint32_t fake_gpu_launch_kernel(const char *name, uint64_t spin_ns, const uint32_t grid[3],
                                const uint32_t block[3])
{
    uint32_t correlation = api_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    CUpti_ActivityKernel10 k = {0};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.registersPerThread = 32;
    k.deviceId = 0, k.contextId = 1, k.streamId = 7;
    k.gridX = grid ? (int32_t)grid[0] : 1, k.gridY = grid ? (int32_t)grid[1] : 1;
    k.gridZ = grid ? (int32_t)grid[2] : 1;
    k.blockX = block ? (int32_t)block[0] : 1, k.blockY = block ? (int32_t)block[1] : 1;
    k.blockZ = block ? (int32_t)block[2] : 1;
    k.correlationId = correlation;
    k.name = name; /* CUPTI's names live while the buffer does; the tests pass literals */
    k.queued = k.submitted = CUPTI_TIMESTAMP_UNKNOWN;
    k.start = stamp();
    spin(spin_ns);
    k.end = stamp();
    k.completed = k.end;
    emit_device((const CUpti_Activity *)(const void *)&k);
    return correlation;
}

uint32_t fake_gpu_memcpy(unsigned copy_kind, uint64_t bytes)
{
    uint32_t correlation = api_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
    CUpti_ActivityMemcpy6 m = {0};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)copy_kind;
    int to_device = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = to_device ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = to_device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.bytes = bytes;
    m.deviceId = 0, m.contextId = 1, m.streamId = 7;
    m.correlationId = correlation;
    m.start = stamp();
    m.end = stamp();
    emit_device((const CUpti_Activity *)(const void *)&m);
    return correlation;
}

uint32_t fake_gpu_memset(uint64_t bytes, uint32_t value)
{
    uint32_t correlation = api_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
    CUpti_ActivityMemset4 m = {0};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = value;
    m.bytes = bytes;
    m.deviceId = 0, m.contextId = 1, m.streamId = 7;
    m.correlationId = correlation;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.start = stamp();
    m.end = stamp();
    emit_device((const CUpti_Activity *)(const void *)&m);
    return correlation;
}

uint32_t fake_gpu_api_call(uint32_t cbid) { return api_call(cbid); }

void fake_gpu_counts_get(fake_gpu_counts *out)
{
    pthread_mutex_lock(&lock);
    *out = f.counts;
    out->client_clock = f.timestamp != NULL;
    pthread_mutex_unlock(&lock);
}

uint64_t fake_gpu_launches_per_buffer(uint64_t buffer_bytes)
{
    uint64_t launch = aligned(sizeof(CUpti_ActivityAPI)) + aligned(sizeof(CUpti_ActivityKernel10));
    return buffer_bytes / launch;
}
