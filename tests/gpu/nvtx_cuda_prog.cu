/* nvtx_cuda_prog.cu: a CUDA program that marks its work with NVTX v3 and
 * knows nothing of stepprof, for `make gpu-check` (tools/gpu_check): run
 * under `stepprof run --targets cpu,gpu`, its NVTX ranges come in through the
 * injection library and its kernels through CUPTI, in one trace. Each of
 * STEPS steps is a pushed "step" range holding "forward" and "backward",
 * each launching one kernel; after each launch it calls cudaGetLastError and
 * cudaGetDevice, two of the calls stepprof turns off per callback id, so the
 * trace shows whether they are kept out. Prints one line with what it did.
 * Needs a CUDA device (exits 77 without one). */
#include <nvtx3/nvToolsExt.h>

#include <cuda_runtime.h>

#include <stdio.h>

enum { STEPS = 6, N = 1 << 20 };

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + 1.0f;
}

static int launch(const char *range, float *x, float a)
{
    nvtxRangePushA(range);
    scale<<<(N + 255) / 256, 256>>>(x, a, N);
    cudaError_t err = cudaGetLastError();
    int device = 0;
    (void)cudaGetDevice(&device);
    nvtxRangePop();
    if (err != cudaSuccess) {
        fprintf(stderr, "nvtx_cuda_prog: launch failed: %s\n", cudaGetErrorString(err));
        return -1;
    }
    return 0;
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("nvtx_cuda_prog: no usable CUDA device; skipped\n");
        return 77;
    }
    float *x = NULL;
    if (cudaMalloc(&x, N * sizeof *x) != cudaSuccess ||
        cudaMemset(x, 0, N * sizeof *x) != cudaSuccess)
        return 1;
    for (int step = 0; step < STEPS; step++) {
        nvtxRangePushA("step");
        if (launch("forward", x, 0.5f) != 0 || launch("backward", x, 2.0f) != 0) return 1;
        if (cudaDeviceSynchronize() != cudaSuccess) return 1;
        nvtxRangePop();
    }
    cudaFree(x);
    printf("nvtx_cuda_prog: steps=%d kernels_per_step=2 ranges=forward,backward\n", STEPS);
    return 0;
}
