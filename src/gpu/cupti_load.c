/* cupti_load.c: finds libcupti and libcuda at run time with dlopen and
 * resolves every function the recorder calls into a table, so that neither
 * stepprof nor its users link against CUDA. cupti_tracer.c calls the loaders
 * once per process, at the first sp__gpu_prepare; a library that loads is
 * never closed again (CUPTI must stay loaded, docs/design.md, GPU recorder). A
 * failure leaves one line in `why` that says what is missing and what to do. */
#define _GNU_SOURCE
#ifdef SP_HAVE_CUPTI

#include "cupti_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resolves name into slot, a function-pointer field. POSIX guarantees that
 * a function pointer and void * have the same representation. */
static int sym(void *handle, const char *name, void *slot)
{
    void *p = dlsym(handle, name);
    memcpy(slot, &p, sizeof p);
    return p != NULL;
}

/* dlerror's text for the last failure, or a fallback. */
static const char *dl_text(void)
{
    const char *e = dlerror();
    return e ? e : "not found";
}

int sp__cuda_load(sp__cuda_api *cu, char *why, size_t why_size)
{
    memset(cu, 0, sizeof *cu);
    cu->handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->handle) {
        snprintf(why, why_size,
                 SP__GPU_OFF "no NVIDIA driver: libcuda.so.1 cannot be loaded (%s)" SP__GPU_CPU_ONLY,
                 dl_text());
        return -1;
    }
    void *h = cu->handle;
    const char *missing = NULL;
#define REQUIRE(slot, name) \
    if (!missing && !sym(h, name, &cu->slot)) missing = name
    REQUIRE(Init, "cuInit");
    REQUIRE(DeviceGetCount, "cuDeviceGetCount");
    REQUIRE(DeviceGet, "cuDeviceGet");
    REQUIRE(DeviceGetName, "cuDeviceGetName");
    REQUIRE(DeviceTotalMem, "cuDeviceTotalMem_v2");
    REQUIRE(DeviceGetAttribute, "cuDeviceGetAttribute");
    REQUIRE(CtxGetCurrent, "cuCtxGetCurrent");
    REQUIRE(CtxSynchronize, "cuCtxSynchronize");
#undef REQUIRE
    if (missing) {
        snprintf(why, why_size,
                 SP__GPU_OFF "the NVIDIA driver's libcuda.so.1 lacks %s (driver too old?)" SP__GPU_CPU_ONLY,
                 missing);
        memset(cu, 0, sizeof *cu); /* the handle stays open: closing a driver is unsafe */
        return -1;
    }
    (void)sym(h, "cuDevicePrimaryCtxGetState", &cu->DevicePrimaryCtxGetState);
    (void)sym(h, "cuDevicePrimaryCtxRetain", &cu->DevicePrimaryCtxRetain);
    (void)sym(h, "cuDevicePrimaryCtxRelease_v2", &cu->DevicePrimaryCtxRelease);
    (void)sym(h, "cuCtxPushCurrent_v2", &cu->CtxPushCurrent);
    (void)sym(h, "cuCtxPopCurrent_v2", &cu->CtxPopCurrent);
    (void)sym(h, "cuGetErrorName", &cu->GetErrorName);
    return 0;
}

/* Opens libcupti: one already in the process (the framework's own) first,
 * then by name through the loader's search path, then in CUDA's usual
 * places. Returns the handle or NULL. */
static void *open_cupti(void)
{
    static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h) return h;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    char path[4096];
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(path, sizeof path, "%s/lib64/libcupti.so", home);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        snprintf(path, sizeof path, "%s/extras/CUPTI/lib64/libcupti.so", home);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    static const char *const paths[] = {"/usr/local/cuda/lib64/libcupti.so",
                                        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    return NULL;
}

int sp__cupti_load(sp__cupti_api *api, char *why, size_t why_size)
{
    memset(api, 0, sizeof *api);
    void *h = open_cupti();
    if (!h) {
        snprintf(why, why_size,
                 SP__GPU_OFF "libcupti.so not found; add CUPTI's lib64 (e.g. "
                             "/usr/local/cuda/extras/CUPTI/lib64) to LD_LIBRARY_PATH" SP__GPU_CPU_ONLY);
        return -1;
    }
    api->handle = h;
    const char *missing = NULL;
#define REQUIRE(slot, name) \
    if (!missing && !sym(h, name, &api->slot)) missing = name
    REQUIRE(GetVersion, "cuptiGetVersion");
    REQUIRE(GetResultString, "cuptiGetResultString");
    REQUIRE(GetCallbackName, "cuptiGetCallbackName");
    REQUIRE(GetTimestamp, "cuptiGetTimestamp");
    REQUIRE(Subscribe, "cuptiSubscribe");
    REQUIRE(Unsubscribe, "cuptiUnsubscribe");
    REQUIRE(ActivityEnable, "cuptiActivityEnable");
    REQUIRE(ActivityDisable, "cuptiActivityDisable");
    REQUIRE(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    REQUIRE(ActivityFlushAll, "cuptiActivityFlushAll");
    REQUIRE(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    REQUIRE(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
#undef REQUIRE
    if (missing) {
        snprintf(why, why_size, SP__GPU_OFF "libcupti lacks %s (CUPTI too old)" SP__GPU_CPU_ONLY,
                 missing);
        memset(api, 0, sizeof *api);
        return -1;
    }
    (void)sym(h, "cuptiSetThreadIdType", &api->SetThreadIdType);
    (void)sym(h, "cuptiActivityRegisterTimestampCallback", &api->ActivityRegisterTimestampCallback);
    (void)sym(h, "cuptiActivityEnableRuntimeApi", &api->ActivityEnableRuntimeApi);
    (void)sym(h, "cuptiActivityEnableDriverApi", &api->ActivityEnableDriverApi);
    (void)sym(h, "cuptiActivityPushExternalCorrelationId", &api->PushExternalCorrelationId);
    (void)sym(h, "cuptiActivityPopExternalCorrelationId", &api->PopExternalCorrelationId);

    CUptiResult r = api->GetVersion(&api->version);
    if (r != CUPTI_SUCCESS || api->version < SP__CUPTI_MIN_VERSION) {
        snprintf(why, why_size,
                 SP__GPU_OFF "CUPTI API version %u is older than %d (CUDA 12.0); install a newer "
                             "CUDA toolkit's CUPTI" SP__GPU_CPU_ONLY,
                 (unsigned)api->version, SP__CUPTI_MIN_VERSION);
        memset(api, 0, sizeof *api);
        return -1;
    }
    return 0;
}

const char *sp__cupti_result_name(const sp__cupti_api *api, CUptiResult r)
{
    static __thread char text[32];
    const char *s = NULL;
    if (api && api->GetResultString && api->GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    snprintf(text, sizeof text, "CUPTI error %d", (int)r);
    return text;
}

#endif /* SP_HAVE_CUPTI */
