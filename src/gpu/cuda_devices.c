/* cuda_devices.c: what the recorder asks of the driver itself: whether it
 * initialises and how many devices it sees, each device's properties (for
 * the trace's deviceProperties and the occupancy estimate), and waiting for
 * the devices before a flush so that the last kernels are in it. Called by
 * cupti_tracer.c under its control lock, through the table of cupti_load.c.
 * It never creates a context: only contexts that exist are synchronised. */
#ifdef SP_HAVE_CUPTI

#include "cupti_load.h"
#include "sys.h"

#include <stdio.h>
#include <string.h>

static const char *cu_name(const sp__cuda_api *cu, CUresult r)
{
    const char *s = NULL;
    if (cu->GetErrorName && cu->GetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    return "unknown CUDA error";
}

int sp__cuda_init(const sp__cuda_api *cu, char *why, size_t why_size)
{
    CUresult r = cu->Init(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        snprintf(why, why_size, SP__GPU_OFF "no CUDA device is visible (cuInit: CUDA_ERROR_NO_DEVICE; "
                                "check CUDA_VISIBLE_DEVICES)" SP__GPU_CPU_ONLY);
        return 0;
    }
    if (r != CUDA_SUCCESS) {
        snprintf(why, why_size, SP__GPU_OFF "the NVIDIA driver failed to initialise (cuInit: %s %d)" SP__GPU_CPU_ONLY,
                 cu_name(cu, r), (int)r);
        return -1;
    }
    int count = 0;
    r = cu->DeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
        snprintf(why, why_size, SP__GPU_OFF "cuDeviceGetCount failed (%s %d)" SP__GPU_CPU_ONLY,
                 cu_name(cu, r), (int)r);
        return -1;
    }
    if (count <= 0) {
        snprintf(why, why_size, SP__GPU_OFF "no CUDA device is visible (check CUDA_VISIBLE_DEVICES)" SP__GPU_CPU_ONLY);
        return 0;
    }
    return count;
}

/* One attribute as an unsigned value; 0 when the driver does not know it. */
static uint32_t attr(const sp__cuda_api *cu, CUdevice dev, CUdevice_attribute a)
{
    int v = 0;
    if (cu->DeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS || v < 0) return 0;
    return (uint32_t)v;
}

static void fill(const sp__cuda_api *cu, CUdevice dev, uint32_t id, sp__device_props *p)
{
    memset(p, 0, sizeof *p);
    p->id = id;
    if (cu->DeviceGetName(p->name, (int)sizeof p->name, dev) != CUDA_SUCCESS) p->name[0] = '\0';
    p->name[sizeof p->name - 1] = '\0';
    size_t mem = 0;
    if (cu->DeviceTotalMem(&mem, dev) == CUDA_SUCCESS) p->total_global_mem = mem;
    p->compute_major = attr(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    p->compute_minor = attr(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    p->max_threads_per_block = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    p->max_threads_per_sm = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    p->regs_per_block = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    p->regs_per_sm = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    p->warp_size = attr(cu, dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    p->shared_per_block = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    p->shared_per_sm = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    p->shared_per_block_optin = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    p->num_sms = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    p->max_blocks_per_sm = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
}

sp__device_props *sp__cuda_device_props(const sp__cuda_api *cu, size_t *count)
{
    *count = 0;
    int n = 0;
    if (cu->DeviceGetCount(&n) != CUDA_SUCCESS || n <= 0) return NULL;
    sp__device_props *props = sp__alloc(sizeof *props * (size_t)n);
    if (!props) return NULL;
    size_t filled = 0;
    for (int i = 0; i < n; i++) {
        CUdevice dev;
        if (cu->DeviceGet(&dev, i) != CUDA_SUCCESS) continue;
        fill(cu, dev, (uint32_t)i, &props[filled++]);
    }
    *count = filled;
    return props;
}

/* Synchronises one device's primary context if it is active: retained,
 * made current, synchronised, then popped and released, so the caller's
 * own current context is left as it was. */
static void sync_primary(const sp__cuda_api *cu, CUdevice dev, CUcontext current)
{
    unsigned flags = 0;
    int active = 0;
    if (cu->DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active) return;
    CUcontext ctx = NULL;
    if (cu->DevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || !ctx) return;
    if (ctx == current) {
        (void)cu->CtxSynchronize();
    } else if (cu->CtxPushCurrent(ctx) == CUDA_SUCCESS) {
        (void)cu->CtxSynchronize();
        CUcontext popped = NULL;
        (void)cu->CtxPopCurrent(&popped);
    }
    (void)cu->DevicePrimaryCtxRelease(dev);
}

void sp__cuda_sync_all(const sp__cuda_api *cu)
{
    CUcontext current = NULL;
    if (cu->CtxGetCurrent(&current) != CUDA_SUCCESS) current = NULL;
    int have_primary = cu->DevicePrimaryCtxGetState && cu->DevicePrimaryCtxRetain &&
                       cu->DevicePrimaryCtxRelease && cu->CtxPushCurrent && cu->CtxPopCurrent;
    int n = 0;
    if (have_primary && cu->DeviceGetCount(&n) == CUDA_SUCCESS) {
        for (int i = 0; i < n; i++) {
            CUdevice dev;
            if (cu->DeviceGet(&dev, i) == CUDA_SUCCESS) sync_primary(cu, dev, current);
        }
    }
    /* A context the caller created itself (not a primary one). Synchronising
     * a primary context twice costs nothing once it is idle. */
    if (current) (void)cu->CtxSynchronize();
}

#endif /* SP_HAVE_CUPTI */
