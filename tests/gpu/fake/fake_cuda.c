/* fake_cuda.c: a test double of the CUDA driver, built as libcuda.so.1 (see
 * fake_gpu.h). It exports what src/gpu/cupti_load.c resolves, with the
 * driver's exact signatures (cuda.h renames cuDeviceTotalMem and the
 * context calls to their _v2 symbols, as the real library exports them):
 * initialisation, device count and properties of an H100-like device, one
 * dummy context that is both current and primary, and a counted
 * cuCtxSynchronize. Work "runs" at launch in fake_cupti.c, so synchronising
 * has nothing to wait for. */
#include "fake_gpu.h"

#include <cuda.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int initialised;
static atomic_int device_count;
static atomic_ullong synchronize_calls;

/* Only its address matters: stepprof compares and passes it back. */
static struct CUctx_st {
    int unused;
} the_context;

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static CUresult check_device(CUdevice dev)
{
    if (!atomic_load(&initialised)) return CUDA_ERROR_NOT_INITIALIZED;
    return dev >= 0 && dev < atomic_load(&device_count) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuInit(unsigned int flags)
{
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    int n = env_int("FAKE_CUDA_DEVICES", 1);
    if (n <= 0) return CUDA_ERROR_NO_DEVICE;
    atomic_store(&device_count, n);
    atomic_store(&initialised, 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    if (!atomic_load(&initialised)) return CUDA_ERROR_NOT_INITIALIZED;
    *count = atomic_load(&device_count);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(ordinal);
    if (r == CUDA_SUCCESS) *device = ordinal;
    return r;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r == CUDA_SUCCESS) snprintf(name, (size_t)len, "stepprof fake GPU");
    return r;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r == CUDA_SUCCESS) *bytes = (size_t)80 << 30;
    return r;
}

/* An H100 SXM's answers; 0 with CUDA_ERROR_INVALID_VALUE for the rest, as
 * the driver answers an attribute it does not know. */
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r != CUDA_SUCCESS) return r;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *pi = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *pi = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *pi = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 48 << 10; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *pi = 228 << 10; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = 227 << 10; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *pi = 32; break;
    default: *pi = 0; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!atomic_load(&initialised)) return CUDA_ERROR_NOT_INITIALIZED;
    *pctx = &the_context;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    if (!atomic_load(&initialised)) return CUDA_ERROR_NOT_INITIALIZED;
    atomic_fetch_add(&synchronize_calls, 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r != CUDA_SUCCESS) return r;
    *flags = 0;
    *active = dev == 0; /* only device 0 has work */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_device(dev);
    if (r == CUDA_SUCCESS) *pctx = &the_context;
    return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { return check_device(dev); }

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    return ctx == &the_context ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    if (pctx) *pctx = &the_context;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
    case CUDA_SUCCESS: *pStr = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *pStr = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *pStr = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_NO_DEVICE: *pStr = "CUDA_ERROR_NO_DEVICE"; break;
    case CUDA_ERROR_INVALID_DEVICE: *pStr = "CUDA_ERROR_INVALID_DEVICE"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *pStr = "CUDA_ERROR_INVALID_CONTEXT"; break;
    default: *pStr = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

uint64_t fake_cuda_synchronize_count(void) { return atomic_load(&synchronize_calls); }
