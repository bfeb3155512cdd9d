/* fake_gpu.h: the control functions of the test doubles of libcuda.so.1
 * (fake_cuda.c) and libcupti.so (fake_cupti.c). The doubles stand in for
 * NVIDIA's libraries on machines without a GPU, so that stepprof's whole
 * GPU path (load, subscribe, callbacks, flush, take, collect, export) runs
 * in the tests. A test does not link against them: it opens them with
 * dlopen("libcuda.so.1" / "libcupti.so", RTLD_NOW), which finds the same
 * instance that stepprof loads (through LD_LIBRARY_PATH), and resolves these
 * functions with dlsym. Each type below is the type of the function of the
 * same name without "_fn".
 *
 * The "device" runs every operation at once on the calling thread: a launch
 * emits its API record, then its device record, into the current activity
 * buffer. Correlation ids start at 1 and increase; every device record is on
 * device 0, context 1, stream 7. What the doubles read from the
 * environment:
 *   FAKE_CUDA_DEVICES                 devices cuInit finds (default 1; 0: CUDA_ERROR_NO_DEVICE)
 *   FAKE_CUPTI_VERSION                cuptiGetVersion's answer (default 26)
 *   FAKE_CUPTI_SUBSCRIBE              "multiple" or "privileges": cuptiSubscribe fails so
 *   FAKE_CUPTI_NO_TIMESTAMP_CALLBACK  1: cuptiActivityRegisterTimestampCallback is not supported
 *   FAKE_CUPTI_REALTIME_OFFSET_NS     the skew's first value (fake_gpu_set_skew)
 *   FAKE_CUPTI_DROPPED                added once to the first cuptiActivityGetNumDroppedRecords */
#ifndef STEPPROF_TESTS_FAKE_GPU_H
#define STEPPROF_TESTS_FAKE_GPU_H

#include <stdint.h>

/* Launches a kernel: a cudaLaunchKernel_v7000 runtime record (start and end
 * read back to back), then a CONCURRENT_KERNEL record whose start and end
 * enclose a busy wait of spin_ns on CLOCK_MONOTONIC. grid and block may be
 * NULL (1, 1, 1). Returns the correlation id shared by both records. */
uint32_t fake_gpu_launch_kernel(const char *name, uint64_t spin_ns, const uint32_t grid[3],
                                const uint32_t block[3]);
typedef uint32_t (*fake_gpu_launch_kernel_fn)(const char *, uint64_t, const uint32_t[3],
                                              const uint32_t[3]);

/* A cudaMemcpyAsync_v3020 call and its MEMCPY record. copy_kind is CUPTI's
 * (CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1, DTOH = 2, ...). Returns the
 * correlation id. */
uint32_t fake_gpu_memcpy(unsigned copy_kind, uint64_t bytes);
typedef uint32_t (*fake_gpu_memcpy_fn)(unsigned, uint64_t);

/* A cudaMemsetAsync_v3020 call and its MEMSET record on device memory. */
uint32_t fake_gpu_memset(uint64_t bytes, uint32_t value);
typedef uint32_t (*fake_gpu_memset_fn)(uint64_t, uint32_t);

/* A bare runtime API call with this callback id (cudaGetDevice_v3020 is 17),
 * which launches nothing: its record is emitted unless the cbid or the
 * RUNTIME kind is disabled. Returns its correlation id. */
uint32_t fake_gpu_api_call(uint32_t cbid);
typedef uint32_t (*fake_gpu_api_call_fn)(uint32_t);

/* What the fake libcupti did since it was loaded. */
typedef struct fake_gpu_counts {
    uint64_t runtime, driver, kernels, memcpys, memsets, external; /* records emitted into a buffer */
    uint64_t dropped;        /* records lost: the request callback gave no buffer */
    uint64_t suppressed;     /* API records not emitted: their cbid was disabled */
    uint64_t disabled_cbids; /* runtime and driver cbids disabled now */
    uint64_t buffers_requested, buffers_delivered;
    uint64_t client_clock; /* 1: times come from the client's timestamp callback */
} fake_gpu_counts;

void fake_gpu_counts_get(fake_gpu_counts *out);
typedef void (*fake_gpu_counts_get_fn)(fake_gpu_counts *);

/* The records a buffer of this many bytes holds, one kernel launch (runtime
 * plus kernel record) at a time: for sizing a test that fills buffers. */
uint64_t fake_gpu_launches_per_buffer(uint64_t buffer_bytes);
typedef uint64_t (*fake_gpu_launches_per_buffer_fn)(uint64_t);

/* Without the client's timestamp callback, record times are CLOCK_REALTIME
 * plus a skew, added when a buffer is delivered (at a flush), not when the
 * record is made: so a test can pick the skew after the work ran, from how
 * long it took, and every record still gets the same one. Sets the skew;
 * -1 (and nothing set) once any record was delivered or a full buffer waits
 * for delivery, since those would keep another. */
int fake_gpu_set_skew(int64_t skew_ns);
typedef int (*fake_gpu_set_skew_fn)(int64_t);

/* The fake libcuda's count of cuCtxSynchronize calls. */
uint64_t fake_cuda_synchronize_count(void);
typedef uint64_t (*fake_cuda_synchronize_count_fn)(void);

#endif
