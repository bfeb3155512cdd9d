/* cupti_load.h: the function tables of libcupti and libcuda, filled by
 * dlopen and dlsym (cupti_load.c), the device helpers built on libcuda
 * (cuda_devices.c) and the periodic flush thread (cupti_flusher.c). Private to src/gpu; only compiled with CUPTI's headers
 * (SP_HAVE_CUPTI), whose declarations give every slot its exact type. */
#ifndef SP_GPU_CUPTI_LOAD_H
#define SP_GPU_CUPTI_LOAD_H

#ifdef SP_HAVE_CUPTI

#include "gpu.h"

#include <cuda.h>
#include <cupti.h>

/* libcupti. Slots marked optional may be NULL (older CUPTI); the others are
 * resolved or the load fails. */
typedef struct sp__cupti_api {
    void *handle;
    uint32_t version; /* cuptiGetVersion */
    __typeof__(&cuptiGetVersion) GetVersion;
    __typeof__(&cuptiGetResultString) GetResultString;
    __typeof__(&cuptiGetCallbackName) GetCallbackName;
    __typeof__(&cuptiGetTimestamp) GetTimestamp;
    __typeof__(&cuptiSubscribe) Subscribe;
    __typeof__(&cuptiUnsubscribe) Unsubscribe;
    __typeof__(&cuptiActivityEnable) ActivityEnable;
    __typeof__(&cuptiActivityDisable) ActivityDisable;
    __typeof__(&cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks;
    __typeof__(&cuptiActivityFlushAll) ActivityFlushAll;
    __typeof__(&cuptiActivityGetNextRecord) ActivityGetNextRecord;
    __typeof__(&cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords;
    /* optional */
    __typeof__(&cuptiSetThreadIdType) SetThreadIdType;
    __typeof__(&cuptiActivityRegisterTimestampCallback) ActivityRegisterTimestampCallback;
    __typeof__(&cuptiActivityEnableRuntimeApi) ActivityEnableRuntimeApi;
    __typeof__(&cuptiActivityEnableDriverApi) ActivityEnableDriverApi;
    __typeof__(&cuptiActivityPushExternalCorrelationId) PushExternalCorrelationId;
    __typeof__(&cuptiActivityPopExternalCorrelationId) PopExternalCorrelationId;
} sp__cupti_api;

/* libcuda (the driver). */
typedef struct sp__cuda_api {
    void *handle;
    __typeof__(&cuInit) Init;
    __typeof__(&cuDeviceGetCount) DeviceGetCount;
    __typeof__(&cuDeviceGet) DeviceGet;
    __typeof__(&cuDeviceGetName) DeviceGetName;
    __typeof__(&cuDeviceTotalMem) DeviceTotalMem; /* cuDeviceTotalMem_v2 */
    __typeof__(&cuDeviceGetAttribute) DeviceGetAttribute;
    __typeof__(&cuCtxGetCurrent) CtxGetCurrent;
    __typeof__(&cuCtxSynchronize) CtxSynchronize;
    /* optional: synchronising every device's primary context */
    __typeof__(&cuDevicePrimaryCtxGetState) DevicePrimaryCtxGetState;
    __typeof__(&cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain;
    __typeof__(&cuDevicePrimaryCtxRelease) DevicePrimaryCtxRelease; /* _v2 */
    __typeof__(&cuCtxPushCurrent) CtxPushCurrent;                   /* _v2 */
    __typeof__(&cuCtxPopCurrent) CtxPopCurrent;                     /* _v2 */
    __typeof__(&cuGetErrorName) GetErrorName;
} sp__cuda_api;

/* The oldest CUPTI accepted: API version 18 is CUDA 12.0. Older releases
 * lay out the leading record fields read here the same way, but they have
 * not been tried. */
enum { SP__CUPTI_MIN_VERSION = 18 };


/* Opens libcuda.so.1 and resolves its table. Returns 0, or -1 after writing
 * one line to why. Threads: not concurrently with itself. */
int sp__cuda_load(sp__cuda_api *cu, char *why, size_t why_size);

/* Opens libcupti (already loaded first, then the usual places), resolves
 * its table and reads its version. Returns 0, or -1 after writing one line
 * to why. Threads: not concurrently with itself. */
int sp__cupti_load(sp__cupti_api *api, char *why, size_t why_size);

/* CUPTI's name for a result, or "CUPTI error <n>". */
const char *sp__cupti_result_name(const sp__cupti_api *api, CUptiResult r);

/* ---- cuda_devices.c ---- */

/* Initialises the driver and counts devices. Returns the count (> 0), 0 when
 * there is no device (why says so), or -1 on another failure (why says it). */
int sp__cuda_init(const sp__cuda_api *cu, char *why, size_t why_size);

/* Fills one sp__device_props per device from driver attributes. Returns the
 * array (free with sp__free) and its count, or NULL. */
sp__device_props *sp__cuda_device_props(const sp__cuda_api *cu, size_t *count);

/* Waits for all work on every device whose primary context is active, and
 * on the calling thread's current context. Failures are ignored: a take
 * then simply misses the last records. */
void sp__cuda_sync_all(const sp__cuda_api *cu);

/* ---- cupti_flusher.c ---- */

/* Starts a thread that calls flush about once a second until stopped.
 * Without the thread (creation failed) nothing breaks: take's forced flush
 * still gets every record; only the pool may run dry sooner.
 * Threads: start and stop are not called concurrently (the tracer's
 * control lock); flush must not take a lock that its caller holds. */
void sp__cupti_flusher_start(void (*flush)(void));
/* Stops and joins the thread; returns at once when none runs. */
void sp__cupti_flusher_stop(void);

#endif /* SP_HAVE_CUPTI */
#endif
