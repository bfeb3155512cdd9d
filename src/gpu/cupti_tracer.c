/* cupti_tracer.c: the GPU recorder of gpu.h over CUPTI's activity API
 * (docs/design.md, GPU recorder). sp__gpu_prepare loads the driver and CUPTI
 * (cupti_load.c), subscribes, registers the buffer callbacks and stepprof's
 * clock, and enables CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME and DRIVER,
 * and EXTERNAL_CORRELATION where it can: each thread's ranges are then
 * pushed as external ids (correlate.h), which tag every API call with the
 * range that made it.
 * CUPTI fills buffers from a pool made at the first prepare (the request
 * callback never allocates: with the pool empty, CUPTI 12.9+ is handed no
 * buffer and counts what it drops itself; an older one, which would crash
 * on that, is handed a discard buffer whose records are only counted);
 * completed buffers are converted
 * (cupti_records.c) into the store under the store lock and go back to the
 * pool. A background thread (cupti_flusher.c) flushes completed buffers
 * about once a second; take and discard synchronise the devices and force a
 * flush first.
 * In a child forked from a process that had loaded CUDA, every call
 * answers at once without touching CUPTI or a lock (gpu_fork.c).
 * Locks: `control` serialises prepare/discard/take/release and may be held
 * across CUPTI flushes; `store_lock` and `pool_lock` are taken by CUPTI's
 * callbacks and are never held while calling a CUPTI flush. */
#define _GNU_SOURCE
#ifdef SP_HAVE_CUPTI

#include "clock.h"
#include "correlate.h"
#include "cupti_load.h"
#include "cupti_records.h"
#include "gpu_fork.h"
#include "sys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum {
    POOL_BUFFERS = 4,
    BUFFER_BYTES = 4 << 20,
    DISCARD_BYTES = 256 << 10,
    AVERAGE_RECORD_BYTES = 36, /* to estimate the spare discard buffer (docs/design.md) */
    NULL_BUFFER_VERSION = 27,  /* CUPTI API 27 (CUDA 12.9) accepts no buffer and counts the drops */
    WHY_BYTES = 512,
};

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};

/* Optional: without it (or without Push/Pop) API calls are attributed by
 * time alone. */
static const CUpti_ActivityKind external_kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;

static pthread_mutex_t control = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int active;

static struct {
    /* under control */
    sp__cuda_api cu;
    sp__cupti_api api; /* read by the callbacks, which run only after it is set */
    int cuda_loaded, cupti_loaded, subscribed, registered;
    int correlating; /* external_kind is enabled and the correlator set */
    int failed; /* a permanent failure: failed_why is the answer from now on */
    char failed_why[WHY_BYTES];
    CUpti_SubscriberHandle subscriber;
    sp__gpu_clock clock;
    sp__device_props *devices;
    size_t device_count;
    /* under store_lock */
    sp__gpu_store store;
    uint64_t cupti_dropped;
    sp__cupti_convert convert;
    /* under pool_lock. Older CUPTI only: `discard` is handed to one fill
     * at a time, so its records can be walked and counted exactly; while it
     * is out, `spare` goes to any further fill (several at once, so it
     * holds garbage) and its records are estimated from its size. */
    uint8_t *all[POOL_BUFFERS], *free[POOL_BUFFERS], *discard, *spare;
    size_t free_count;
    int discard_out;
} g;

/* ---- CUPTI's callbacks ---- */

static uint64_t CUPTIAPI timestamp(void) { return sp__ticks(); }

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data; /* subscribed only to hold the slot */
}

static const char *api_name(void *ctx, int driver, uint32_t cbid)
{
    (void)ctx;
    const char *name = NULL;
    CUpti_CallbackDomain d = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    if (g.api.GetCallbackName(d, cbid, &name) != CUPTI_SUCCESS) return NULL;
    return name;
}

/* The correlator (correlate.h): called on the thread that begins or ends
 * a range, while recording. */
static void push_range(uint64_t id) { (void)g.api.PushExternalCorrelationId(SP__CUPTI_EXTERNAL_KIND, id); }

static void pop_range(void)
{
    uint64_t id = 0;
    (void)g.api.PopExternalCorrelationId(SP__CUPTI_EXTERNAL_KIND, &id);
}

static const sp__correlator correlator = {push_range, pop_range};

/* Hands CUPTI a pool buffer; with none free, no buffer (CUPTI 12.9+) or
 * a discard buffer. Never allocates; pool_lock is held for a few loads and
 * stores. */
static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0;
    *buffer = NULL;
    *size = 0;
    pthread_mutex_lock(&pool_lock);
    if (g.free_count) {
        *buffer = g.free[--g.free_count];
        *size = BUFFER_BYTES;
    } else if (g.api.version >= NULL_BUFFER_VERSION) {
        /* CUPTI drops the records and counts them (cupti_dropped). */
    } else if (!g.discard_out) {
        g.discard_out = 1;
        *buffer = g.discard;
        *size = g.discard ? DISCARD_BYTES : 0;
    } else {
        *buffer = g.spare;
        *size = g.spare ? DISCARD_BYTES : 0;
    }
    pthread_mutex_unlock(&pool_lock);
}

static int is_pool_buffer(const uint8_t *b)
{
    for (int i = 0; i < POOL_BUFFERS; i++)
        if (g.all[i] == b) return 1;
    return 0;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    if (buffer && (buffer == g.discard || buffer == g.spare)) {
        /* The discard buffer is out to this fill alone until it is back. */
        size_t n = buffer == g.discard ? sp__cupti_walk(NULL, NULL, g.api.ActivityGetNextRecord, buffer, valid)
                                       : (valid + AVERAGE_RECORD_BYTES - 1) / AVERAGE_RECORD_BYTES;
        if (buffer == g.discard) {
            pthread_mutex_lock(&pool_lock);
            g.discard_out = 0;
            pthread_mutex_unlock(&pool_lock);
        }
        pthread_mutex_lock(&store_lock);
        g.store.discarded_records += n;
        pthread_mutex_unlock(&store_lock);
    } else if (buffer) {
        pthread_mutex_lock(&store_lock);
        sp__cupti_walk(&g.store, &g.convert, g.api.ActivityGetNextRecord, buffer, valid);
        pthread_mutex_unlock(&store_lock);
        pthread_mutex_lock(&pool_lock);
        if (is_pool_buffer(buffer) && g.free_count < POOL_BUFFERS) g.free[g.free_count++] = buffer;
        pthread_mutex_unlock(&pool_lock);
    }
    /* Outside our locks: CUPTI takes its own here (Kineto's ABBA deadlock). */
    size_t dropped = 0;
    if (g.api.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
        pthread_mutex_lock(&store_lock);
        g.cupti_dropped += dropped;
        pthread_mutex_unlock(&store_lock);
    }
}

/* ---- the pool ---- */

/* Allocates the buffers once; they are never freed, as CUPTI may still
 * hold some after a release. Called before the callbacks are registered. */
static int pool_create(void)
{
    if (g.discard) return 0;
    uint8_t *all[POOL_BUFFERS] = {0}, *discard = sp__alloc(DISCARD_BYTES), *spare = sp__alloc(DISCARD_BYTES);
    int ok = discard && spare;
    for (int i = 0; ok && i < POOL_BUFFERS; i++) ok = (all[i] = sp__alloc(BUFFER_BYTES)) != NULL;
    if (!ok) {
        for (int i = 0; i < POOL_BUFFERS; i++) sp__free(all[i]);
        sp__free(discard);
        sp__free(spare);
        return -1;
    }
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < POOL_BUFFERS; i++) g.all[i] = g.free[i] = all[i];
    g.free_count = POOL_BUFFERS;
    g.discard = discard;
    g.spare = spare;
    pthread_mutex_unlock(&pool_lock);
    return 0;
}

/* The flush thread's work: completed buffers only, no GPU sync. */
static void flush_completed(void) { (void)g.api.ActivityFlushAll(0); }

/* ---- prepare ---- */

/* Writes the line for a failed CUPTI call, with the advice that fits. */
static void explain(CUptiResult r, const char *call, char *why, size_t why_size)
{
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(why, why_size, SP__GPU_OFF "another CUPTI client (nsys, torch.profiler, ...) holds the "
                                "subscriber" SP__GPU_CPU_ONLY);
    else if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
        snprintf(why, why_size, SP__GPU_OFF "CUPTI lacks the privileges to profile (in a container run with "
                                "--cap-add SYS_ADMIN, or load the driver with "
                                "NVreg_RestrictProfilingToAdminUsers=0)" SP__GPU_CPU_ONLY);
    else
        snprintf(why, why_size, SP__GPU_OFF "%s failed (%s)" SP__GPU_CPU_ONLY, call,
                 sp__cupti_result_name(&g.api, r));
}

/* Remembers a permanent failure: later prepares answer with the same line. */
static int remember(const char *why)
{
    g.failed = 1;
    snprintf(g.failed_why, sizeof g.failed_why, "%s", why);
    return -1;
}

static void disable_kinds(void)
{
    if (g.correlating) {
        sp__record_set_correlator(NULL);
        (void)g.api.ActivityDisable(external_kind);
        g.correlating = 0;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) (void)g.api.ActivityDisable(kinds[i]);
}

/* Tags API calls with their ranges where this CUPTI can. */
static void start_correlating(void)
{
    if (!g.api.PushExternalCorrelationId || !g.api.PopExternalCorrelationId) return;
    if (g.api.ActivityEnable(external_kind) != CUPTI_SUCCESS) return;
    sp__record_set_correlator(&correlator);
    g.correlating = 1;
}

/* Subscribes, registers the clock and the buffer callbacks: at each
 * prepare after a release (which gives them back), once while active. */
static int attach(char *why, size_t why_size)
{
    if (!g.subscribed) {
        CUptiResult r = g.api.Subscribe(&g.subscriber, on_callback, NULL);
        if (r != CUPTI_SUCCESS) {
            explain(r, "cuptiSubscribe", why, why_size);
            return remember(why);
        }
        g.subscribed = 1;
    }
    if (g.registered) return 0;
    if (pool_create() != 0) {
        snprintf(why, why_size, SP__GPU_OFF "out of memory for CUPTI's buffers" SP__GPU_CPU_ONLY);
        return -1;
    }
    /* Both before any kind is enabled, as CUPTI asks. Without the timestamp
     * callback, times stay on CUPTI's CLOCK_REALTIME. */
    if (g.api.SetThreadIdType) (void)g.api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    sp__clock_init();
    g.clock = SP__GPU_CLOCK_REALTIME;
    if (g.api.ActivityRegisterTimestampCallback &&
        g.api.ActivityRegisterTimestampCallback(timestamp) == CUPTI_SUCCESS)
        g.clock = SP__GPU_CLOCK_TICKS;
    CUptiResult r = g.api.ActivityRegisterCallbacks(on_request, on_complete);
    if (r != CUPTI_SUCCESS) {
        explain(r, "cuptiActivityRegisterCallbacks", why, why_size);
        return remember(why);
    }
    g.convert.api_name = api_name;
    g.registered = 1;
    return 0;
}

/* Enables the kinds, then turns the noisy API calls off one by one where
 * CUPTI can (12.6+); cupti_records.c drops them anyway. */
static int enable(char *why, size_t why_size)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        CUptiResult r = g.api.ActivityEnable(kinds[i]);
        if (r != CUPTI_SUCCESS) {
            disable_kinds();
            explain(r, "cuptiActivityEnable", why, why_size);
            if (g.subscribed && g.api.Unsubscribe(g.subscriber) == CUPTI_SUCCESS) g.subscribed = 0;
            return remember(why);
        }
    }
    start_correlating();
    for (size_t i = 0; g.api.ActivityEnableRuntimeApi && i < sp__cupti_noisy_runtime_count; i++)
        (void)g.api.ActivityEnableRuntimeApi(sp__cupti_noisy_runtime[i], 0);
    for (size_t i = 0; g.api.ActivityEnableDriverApi && i < sp__cupti_noisy_driver_count; i++)
        (void)g.api.ActivityEnableDriverApi(sp__cupti_noisy_driver[i], 0);
    return 0;
}

/* Loads the driver and CUPTI and checks for a device: what prepare needs
 * before it subscribes. */
static int load_locked(char *why, size_t why_size)
{
    if (!g.cuda_loaded) {
        if (sp__cuda_load(&g.cu, why, why_size) != 0) return remember(why);
        g.cuda_loaded = 1;
    }
    int devices = sp__cuda_init(&g.cu, why, why_size);
    if (devices < 0) return remember(why);
    if (devices == 0) return -1; /* not remembered: "no device" may be a passing state */
    if (!g.cupti_loaded) {
        if (sp__cupti_load(&g.api, why, why_size) != 0) return remember(why);
        g.cupti_loaded = 1;
    }
    return 0;
}

static int prepare_locked(char *why, size_t why_size)
{
    if (load_locked(why, why_size) != 0) return -1;
    if (attach(why, why_size) != 0 || enable(why, why_size) != 0) return -1;
    if (!g.devices) g.devices = sp__cuda_device_props(&g.cu, &g.device_count);
    sp__cupti_flusher_start(flush_completed);
    atomic_store(&active, 1);
    return 0;
}

/* Runs step under the control lock, unless the recorder is already active
 * (0) or failed for good before (-1, with the line it gave then). */
static int guarded(int (*step)(char *, size_t), char *why, size_t why_size)
{
    char local[WHY_BYTES];
    if (!why || why_size == 0) why = local, why_size = sizeof local;
    if (sp__gpu_fork_refuses(why, why_size)) return -1;
    sp__gpu_fork_touch();
    pthread_mutex_lock(&control);
    int rc = 0;
    if (atomic_load(&active))
        rc = 0;
    else if (g.failed)
        rc = -1, snprintf(why, why_size, "%s", g.failed_why);
    else
        rc = step(why, why_size);
    pthread_mutex_unlock(&control);
    return rc;
}

int sp__gpu_prepare(char *why, size_t why_size) { return guarded(prepare_locked, why, why_size); }

int sp__gpu_probe(char *why, size_t why_size) { return guarded(load_locked, why, why_size); }

/* ---- take, discard, release ---- */

/* Now, on the clock of the records. */
static uint64_t now(void)
{
    uint64_t t = 0;
    if (g.clock == SP__GPU_CLOCK_TICKS) return sp__ticks();
    if (g.api.GetTimestamp(&t) == CUPTI_SUCCESS) return t;
    return (uint64_t)sp__clock_real_now();
}

/* Waits for the devices, then has CUPTI hand over every buffer, partial
 * ones included. The API calls the synchronisation makes are dropped on
 * conversion. Caller holds control, not store_lock. */
static void sync_and_flush(void)
{
    if (atomic_load(&active)) {
        uint64_t tid = (uint64_t)syscall(SYS_gettid);
        uint64_t t0 = now();
        sp__cuda_sync_all(&g.cu);
        uint64_t t1 = now();
        pthread_mutex_lock(&store_lock);
        g.convert.skip_tid = tid, g.convert.skip_start = t0, g.convert.skip_end = t1;
        pthread_mutex_unlock(&store_lock);
    }
    (void)g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void sp__gpu_discard(void)
{
    if (!sp__gpu_fork_usable()) return;
    pthread_mutex_lock(&control);
    if (g.registered) {
        sync_and_flush();
        pthread_mutex_lock(&store_lock);
        sp__gpu_store_fini(&g.store);
        g.cupti_dropped = 0;
        pthread_mutex_unlock(&store_lock);
    }
    pthread_mutex_unlock(&control);
}

int sp__gpu_take(sp__gpu_batch *out)
{
    memset(out, 0, sizeof *out);
    if (!sp__gpu_fork_usable()) return 0;
    pthread_mutex_lock(&control);
    if (!g.registered) {
        pthread_mutex_unlock(&control);
        return 0;
    }
    sync_and_flush();
    pthread_mutex_lock(&store_lock);
    sp__gpu_store_link_external(&g.store);
    out->records = g.store.records;
    out->count = g.store.count;
    out->names = g.store.names;
    out->discarded_records = g.store.discarded_records;
    out->zero_timestamp = g.store.zero_timestamp;
    out->cupti_dropped = g.cupti_dropped;
    memset(&g.store, 0, sizeof g.store);
    g.cupti_dropped = 0;
    pthread_mutex_unlock(&store_lock);
    out->clock = g.clock;
    int rc = 0;
    if (g.device_count) {
        out->devices = sp__alloc(sizeof *out->devices * g.device_count);
        if (out->devices) {
            memcpy(out->devices, g.devices, sizeof *out->devices * g.device_count);
            out->device_count = g.device_count;
        } else {
            out->discarded_records += out->count; /* the contract: out of memory drops the records */
            sp__free(out->records);
            out->records = NULL;
            out->count = 0;
            rc = -1;
        }
    }
    pthread_mutex_unlock(&control);
    return rc;
}

void sp__gpu_batch_free(sp__gpu_batch *b)
{
    if (!b) return;
    sp__free(b->records);
    sp__free(b->devices);
    sp__gpu_names_destroy(b->names);
    memset(b, 0, sizeof *b);
}

/* CUPTI has one subscriber slot per process, and one set of activity
 * buffer callbacks: held after the profiler stops, they would keep every
 * other CUPTI client out (torch.profiler started later in the same process
 * got MULTIPLE_SUBSCRIBERS on a real GPU). So release gives both back,
 * once CUPTI has handed over the buffers it held, and the next prepare
 * subscribes and registers again (attach). */
void sp__gpu_release(void)
{
    if (!sp__gpu_fork_usable()) return;
    pthread_mutex_lock(&control);
    if (atomic_load(&active)) {
        atomic_store(&active, 0);
        sp__cupti_flusher_stop();
        disable_kinds();
    }
    if (g.registered) {
        (void)g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        pthread_mutex_lock(&store_lock);
        sp__gpu_store_fini(&g.store); /* after the last take: nobody's records */
        g.cupti_dropped = 0;
        pthread_mutex_unlock(&store_lock);
        g.registered = 0;
    }
    if (g.subscribed && g.api.Unsubscribe(g.subscriber) == CUPTI_SUCCESS) g.subscribed = 0;
    pthread_mutex_unlock(&control);
}

int sp__gpu_active(void) { return sp__gpu_fork_usable() && atomic_load(&active); }

#endif /* SP_HAVE_CUPTI */
