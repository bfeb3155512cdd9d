/* gpu_train.cu: the GPU example. It trains a toy two-layer MLP with
 * hand-written CUDA kernels and marks each phase of a step the way a
 * framework would (Dataloader: a batch copied host to device; Forward and
 * Backward: matmul, ReLU and loss kernels; Optimization: SGD kernels and a
 * cudaMemset that zeroes the gradients), while stepprof records steps
 * [10, 15) with the GPU target and writes one Chrome trace.
 *
 * The program keeps its own ledger of what the recorded steps did: kernels
 * launched, copies, memsets, and every kernel timed with a pair of
 * cudaEvents. Its last line states them, so that a test can hold the trace
 * against it (tests/gpu/check_gpu_trace.py):
 *
 *   gpu_train: recorded_steps=5 kernels=50 memcpys=10 memsets=5 kernel_time_us=... trace=<path>
 *
 * Kernels are sized to run for hundreds of microseconds, because an event
 * pair adds a few microseconds to what it times and the test compares the
 * sums within 5%. Without a usable CUDA device it says so in one line and
 * exits 77, the test suites' "skipped". Written in C style; nvcc compiles it
 * as C++. */
#include <stepprof/stepprof.h>

#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Model: X[B,D] -> ReLU(X W1)[B,H] -> Y = . W2 [B,O]; the target is a fixed
 * linear function of X, so the loss falls. One step is about 7.5 GFMA. */
enum { BATCH = 1024, DIM = 1024, HIDDEN = 2048, OUT = 512, PREPARED_BATCHES = 4 };
enum { RECORD_FIRST = 10, RECORD_STEPS = 5, DEFAULT_STEPS = 20 };
enum { TILE = 16, MAX_TIMED = 16 };
#define LEARNING_RATE 0.02f /* below 2 / (largest curvature, about 36 at init) */

/* Stops the example on a failed CUDA call: nothing sensible follows it. */
static void cuda_check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return;
    fprintf(stderr, "gpu_train: %s failed: %s\n", what, cudaGetErrorString(err));
    exit(1);
}
#define CK(call) cuda_check((call), #call)

/* ---- kernels ----------------------------------------------------------- */

/* C[m,n] = A[m,k] B[k,n] (+ C when accumulate). A's element (i, j) is at
 * a[i * sa_row + j * sa_col], and likewise for B, so one kernel serves the
 * transposed products of the backward pass. C is dense, row-major. */
__global__ void matmul(int m, int n, int k, const float *a, int sa_row, int sa_col,
                       const float *b, int sb_row, int sb_col, float *c, int accumulate)
{
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += TILE) {
        int ka = k0 + tx, kb = k0 + ty;
        as[ty][tx] = (row < m && ka < k) ? a[(size_t)row * sa_row + (size_t)ka * sa_col] : 0.0f;
        bs[ty][tx] = (kb < k && col < n) ? b[(size_t)kb * sb_row + (size_t)col * sb_col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; i++) acc += as[ty][i] * bs[i][tx];
        __syncthreads();
    }
    if (row < m && col < n) {
        size_t o = (size_t)row * n + col;
        c[o] = accumulate ? c[o] + acc : acc;
    }
}

__global__ void relu(const float *x, float *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* dx *= (x > 0), in place. */
__global__ void relu_grad(const float *x, float *dx, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (x[i] <= 0.0f) dx[i] = 0.0f;
}

/* Mean squared error over the batch: dy = (y - t) / rows, and
 * *loss += sum((y - t)^2) / (2 rows). Launch with 256 threads per block. */
__global__ void mse_loss(const float *y, const float *t, float *dy, float *loss, size_t n,
                         float inv_rows)
{
    __shared__ float part[256];
    float sum = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float d = y[i] - t[i];
        dy[i] = d * inv_rows;
        sum += d * d;
    }
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(loss, 0.5f * part[0] * inv_rows);
}

__global__ void sgd(float *w, const float *g, size_t n, float lr)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        w[i] -= lr * g[i];
}

/* Uniform values in [-scale, scale) from a hash of the index: weights need
 * no host-side generation. */
__global__ void init_uniform(float *x, size_t n, unsigned seed, float scale)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        x[i] = scale * ((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

/* ---- the step's ledger ------------------------------------------------- */

/* What one step launched, and a cudaEvent pair around each kernel. The
 * ledger is read after the step's last synchronisation. */
typedef struct ledger {
    cudaEvent_t begin[MAX_TIMED], end[MAX_TIMED];
    int kernels, memcpys, memsets;
} ledger;

/* Totals over the recorded steps. */
typedef struct totals {
    int steps, kernels, memcpys, memsets;
    double kernel_time_us;
} totals;

/* Launches one kernel inside an Operator range named after it, between the
 * events of the next ledger slot. */
#define LAUNCH(lg, name, grid, block, kernel, ...)                                                 \
    do {                                                                                           \
        if ((lg)->kernels >= MAX_TIMED) cuda_check(cudaErrorInvalidValue, "ledger: too many kernels"); \
        sp_range_begin(SP_EVENT_OPERATOR, name);                                                   \
        CK(cudaEventRecord((lg)->begin[(lg)->kernels], 0));                                        \
        kernel<<<(grid), (block)>>>(__VA_ARGS__);                                                  \
        CK(cudaEventRecord((lg)->end[(lg)->kernels], 0));                                          \
        (lg)->kernels++;                                                                           \
        sp_range_end();                                                                            \
    } while (0)

/* ---- model ------------------------------------------------------------- */

typedef struct model {
    float *w1, *w2;        /* [D,H], [H,O] */
    float *grads;          /* one block: dW1 [D,H], dW2 [H,O], loss: zeroed by one memset */
    float *dw1, *dw2, *loss;
    size_t grads_bytes;
    float *batch;          /* the device batch: X [B,D] then T [B,O] */
    float *hpre, *hact, *y, *dy, *dh;
    float *host_batches;   /* PREPARED_BATCHES batches in pinned memory */
    float *host_loss;      /* pinned */
} model;

static const size_t X_FLOATS = (size_t)BATCH * DIM;
static const size_t BATCH_FLOATS = (size_t)BATCH * DIM + (size_t)BATCH * OUT;

static dim3 matmul_grid(int m, int n) { return dim3((n + TILE - 1) / TILE, (m + TILE - 1) / TILE); }
static const dim3 MATMUL_BLOCK(TILE, TILE);
static const int EW_GRID = 1024, EW_BLOCK = 256; /* elementwise kernels (grid-stride loops) */

/* Inputs uniform in [-1, 1); the target T[b,o] = 0.5 X[b,2o] - 0.25 X[b,2o+1]. */
static void fill_batch(float *xt, unsigned seed)
{
    unsigned s = seed;
    for (size_t i = 0; i < X_FLOATS; i++) {
        s = s * 1664525u + 1013904223u;
        xt[i] = (float)(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
    float *t = xt + X_FLOATS;
    for (int b = 0; b < BATCH; b++)
        for (int o = 0; o < OUT; o++)
            t[(size_t)b * OUT + o] =
                0.5f * xt[(size_t)b * DIM + 2 * o] - 0.25f * xt[(size_t)b * DIM + 2 * o + 1];
}

/* Allocates and initialises everything before profiling starts, so that the
 * recorded steps contain only the training loop's own work. */
static void model_init(model *m)
{
    memset(m, 0, sizeof *m);
    size_t w1 = (size_t)DIM * HIDDEN, w2 = (size_t)HIDDEN * OUT;
    CK(cudaMalloc((void **)&m->w1, w1 * sizeof(float)));
    CK(cudaMalloc((void **)&m->w2, w2 * sizeof(float)));
    m->grads_bytes = (w1 + w2 + 1) * sizeof(float);
    CK(cudaMalloc((void **)&m->grads, m->grads_bytes));
    m->dw1 = m->grads;
    m->dw2 = m->grads + w1;
    m->loss = m->grads + w1 + w2;
    CK(cudaMalloc((void **)&m->batch, BATCH_FLOATS * sizeof(float)));
    CK(cudaMalloc((void **)&m->hpre, (size_t)BATCH * HIDDEN * sizeof(float)));
    CK(cudaMalloc((void **)&m->hact, (size_t)BATCH * HIDDEN * sizeof(float)));
    CK(cudaMalloc((void **)&m->dh, (size_t)BATCH * HIDDEN * sizeof(float)));
    CK(cudaMalloc((void **)&m->y, (size_t)BATCH * OUT * sizeof(float)));
    CK(cudaMalloc((void **)&m->dy, (size_t)BATCH * OUT * sizeof(float)));
    CK(cudaMallocHost((void **)&m->host_batches, PREPARED_BATCHES * BATCH_FLOATS * sizeof(float)));
    CK(cudaMallocHost((void **)&m->host_loss, sizeof(float)));
    for (int i = 0; i < PREPARED_BATCHES; i++)
        fill_batch(m->host_batches + i * BATCH_FLOATS, 0x5eed0000u + (unsigned)i);
    init_uniform<<<EW_GRID, EW_BLOCK>>>(m->w1, w1, 0x1111u, 1.0f / sqrtf((float)DIM));
    init_uniform<<<EW_GRID, EW_BLOCK>>>(m->w2, w2, 0x2222u, 1.0f / sqrtf((float)HIDDEN));
    CK(cudaGetLastError());
    CK(cudaMemset(m->grads, 0, m->grads_bytes));
    CK(cudaDeviceSynchronize());
}

static void model_fini(model *m)
{
    cudaFree(m->w1);
    cudaFree(m->w2);
    cudaFree(m->grads);
    cudaFree(m->batch);
    cudaFree(m->hpre);
    cudaFree(m->hact);
    cudaFree(m->dh);
    cudaFree(m->y);
    cudaFree(m->dy);
    cudaFreeHost(m->host_batches);
    cudaFreeHost(m->host_loss);
}

/* One training step: 10 kernels, 2 copies, 1 memset. Returns the loss. */
static float train_step(model *m, ledger *lg, int step)
{
    const float *x = m->batch, *t = m->batch + X_FLOATS;
    size_t hn = (size_t)BATCH * HIDDEN, yn = (size_t)BATCH * OUT;

    sp_range_begin(SP_EVENT_DATALOADER, "DataLoader");
    CK(cudaMemcpy(m->batch, m->host_batches + (step % PREPARED_BATCHES) * BATCH_FLOATS,
                  BATCH_FLOATS * sizeof(float), cudaMemcpyHostToDevice));
    lg->memcpys++;
    sp_range_end();

    sp_range_begin(SP_EVENT_FORWARD, "forward");
    LAUNCH(lg, "linear1", matmul_grid(BATCH, HIDDEN), MATMUL_BLOCK, matmul, BATCH, HIDDEN, DIM, x,
           DIM, 1, m->w1, HIDDEN, 1, m->hpre, 0);
    LAUNCH(lg, "relu", EW_GRID, EW_BLOCK, relu, m->hpre, m->hact, hn);
    LAUNCH(lg, "linear2", matmul_grid(BATCH, OUT), MATMUL_BLOCK, matmul, BATCH, OUT, HIDDEN,
           m->hact, HIDDEN, 1, m->w2, OUT, 1, m->y, 0);
    LAUNCH(lg, "mse_loss", EW_GRID, EW_BLOCK, mse_loss, m->y, t, m->dy, m->loss, yn,
           1.0f / BATCH);
    sp_range_end();

    sp_range_begin(SP_EVENT_BACKWARD, "backward");
    /* dW2 += Hact^T dY;  dH = dY W2^T;  dH *= ReLU';  dW1 += X^T dH */
    LAUNCH(lg, "linear2_grad_weight", matmul_grid(HIDDEN, OUT), MATMUL_BLOCK, matmul, HIDDEN, OUT,
           BATCH, m->hact, 1, HIDDEN, m->dy, OUT, 1, m->dw2, 1);
    LAUNCH(lg, "linear2_grad_input", matmul_grid(BATCH, HIDDEN), MATMUL_BLOCK, matmul, BATCH,
           HIDDEN, OUT, m->dy, OUT, 1, m->w2, 1, OUT, m->dh, 0);
    LAUNCH(lg, "relu_grad", EW_GRID, EW_BLOCK, relu_grad, m->hpre, m->dh, hn);
    LAUNCH(lg, "linear1_grad_weight", matmul_grid(DIM, HIDDEN), MATMUL_BLOCK, matmul, DIM, HIDDEN,
           BATCH, x, 1, DIM, m->dh, HIDDEN, 1, m->dw1, 1);
    sp_range_end();

    /* loss.item(): the copy also waits for the kernels above. */
    sp_range_begin(SP_EVENT_USER_DEFINED, "loss.item");
    CK(cudaMemcpy(m->host_loss, m->loss, sizeof(float), cudaMemcpyDeviceToHost));
    lg->memcpys++;
    sp_range_end();

    sp_range_begin(SP_EVENT_OPTIMIZATION, "sgd");
    LAUNCH(lg, "sgd_w1", EW_GRID, EW_BLOCK, sgd, m->w1, m->dw1, (size_t)DIM * HIDDEN,
           LEARNING_RATE);
    LAUNCH(lg, "sgd_w2", EW_GRID, EW_BLOCK, sgd, m->w2, m->dw2, (size_t)HIDDEN * OUT,
           LEARNING_RATE);
    sp_range_begin(SP_EVENT_OPERATOR, "zero_grad");
    CK(cudaMemset(m->grads, 0, m->grads_bytes)); /* dW1, dW2 and the loss */
    lg->memsets++;
    sp_range_end();
    sp_range_end();

    CK(cudaGetLastError());
    return *m->host_loss;
}

/* Waits for the step's work, then moves its ledger into the totals if the
 * step was recorded, and clears it. */
static void settle(ledger *lg, totals *tot, int recorded)
{
    CK(cudaDeviceSynchronize());
    if (recorded) {
        for (int i = 0; i < lg->kernels; i++) {
            float ms;
            CK(cudaEventElapsedTime(&ms, lg->begin[i], lg->end[i]));
            tot->kernel_time_us += 1e3 * ms;
        }
        tot->steps++;
        tot->kernels += lg->kernels;
        tot->memcpys += lg->memcpys;
        tot->memsets += lg->memsets;
    }
    lg->kernels = lg->memcpys = lg->memsets = 0;
}

/* ---- profiler and main ------------------------------------------------- */

static int warnings;

/* Passes stepprof's warnings on and counts them: a missing CUPTI shows up
 * here, and the last line reports the count. */
static void log_warning(sp_log_level level, const char *message, void *user)
{
    (void)user;
    warnings++;
    fprintf(stderr, "gpu_train: stepprof %s: %s\n", level == SP_LOG_INFO ? "info" : "warning",
            message);
}

static int failed(sp_status st, const char *what)
{
    if (st == SP_OK) return 0;
    const char *msg = sp_last_error();
    fprintf(stderr, "gpu_train: %s failed (%s)%s%s\n", what, sp_status_str(st), *msg ? ": " : "",
            msg);
    return 1;
}

static sp_status make_profiler(const char *out_dir, sp_profiler **out)
{
    sp_options o;
    sp_options_init(&o);
    o.targets = SP_TARGET_CPU | SP_TARGET_GPU;
    o.log = log_warning;
    sp_status st = sp_scheduler_range(&o.scheduler, RECORD_FIRST, RECORD_FIRST + RECORD_STEPS);
    if (st == SP_OK) st = sp_handler_chrome_tracing(&o.on_trace_ready, out_dir, "gpu_train");
    if (st == SP_OK) st = sp_profiler_create(&o, out);
    return st;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gpu_train [--steps N] [--out DIR]\n"
               "  --steps N  training steps, at least %d (default %d)\n"
               "  --out DIR  trace directory (default ./profiler_log)\n"
               "The profiler records steps [%d, %d) with the CPU and GPU targets.\n"
               "Exits 77 when no CUDA device can be used.\n",
            RECORD_FIRST + RECORD_STEPS, DEFAULT_STEPS, RECORD_FIRST, RECORD_FIRST + RECORD_STEPS);
}

/* Returns 0 to run, 1 after --help, -1 after a bad argument. */
static int parse_args(int argc, char **argv, int *steps, const char **out_dir)
{
    *steps = DEFAULT_STEPS;
    *out_dir = "./profiler_log";
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (!val) goto bad;
        i++;
        if (strcmp(opt, "--steps") == 0) {
            char *end;
            long v = strtol(val, &end, 10);
            if (end == val || *end || v < RECORD_FIRST + RECORD_STEPS || v > 100000) goto bad;
            *steps = (int)v;
        } else if (strcmp(opt, "--out") == 0) {
            *out_dir = val;
        } else {
            goto bad;
        }
    }
    return 0;
bad:
    usage(stderr);
    return -1;
}

/* Exits 77 unless a CUDA device can be used. */
static void require_device(void)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        printf("gpu_train: no usable CUDA device (%s); skipped\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        exit(77);
    }
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("gpu_train: device 0 %s (sm_%d%d); mlp %d-%d-%d, batch %d; steps [%d, %d) recorded\n",
           prop.name, prop.major, prop.minor, DIM, HIDDEN, OUT, BATCH, RECORD_FIRST,
           RECORD_FIRST + RECORD_STEPS);
}

int main(int argc, char **argv)
{
    int steps;
    const char *out_dir;
    int rc = parse_args(argc, argv, &steps, &out_dir);
    if (rc != 0) return rc > 0 ? 0 : 2;
    require_device();

    model m;
    ledger lg;
    totals tot;
    memset(&lg, 0, sizeof lg);
    memset(&tot, 0, sizeof tot);
    model_init(&m);
    for (int i = 0; i < MAX_TIMED; i++) {
        CK(cudaEventCreate(&lg.begin[i]));
        CK(cudaEventCreate(&lg.end[i]));
    }

    int status = 1;
    sp_profiler *prof = NULL;
    if (failed(make_profiler(out_dir, &prof), "creating the profiler")) goto done;
    if (failed(sp_profiler_start(prof), "sp_profiler_start")) goto done;
    for (int step = 0; step < steps; step++) {
        sp_state state = sp_profiler_state(prof);
        int recorded = state == SP_STATE_RECORD || state == SP_STATE_RECORD_AND_RETURN;
        float loss = train_step(&m, &lg, step);
        settle(&lg, &tot, recorded);
        if (failed(sp_profiler_step(prof, BATCH), "sp_profiler_step")) goto done;
        if (step % 5 == 0 || step == steps - 1) printf("step %4d  loss %.5f\n", step, loss);
    }
    if (failed(sp_profiler_stop(prof), "sp_profiler_stop")) goto done;

    if (sp_profiler_result(prof)) {
        sp_summary_options so;
        sp_summary_options_init(&so);
        if (sp_result_summary(sp_profiler_result(prof), &so, stdout) != SP_OK)
            fprintf(stderr, "gpu_train: summary failed: %s\n", sp_last_error());
    }
    {
        const char *path = sp_profiler_trace_path(prof);
        printf("gpu_train: recorded_steps=%d kernels=%d memcpys=%d memsets=%d kernel_time_us=%.3f "
               "warnings=%d trace=%s\n",
               tot.steps, tot.kernels, tot.memcpys, tot.memsets, tot.kernel_time_us, warnings,
               path ? path : "none");
        status = path ? 0 : 1;
    }
done:
    sp_profiler_destroy(prof);
    for (int i = 0; i < MAX_TIMED; i++) {
        cudaEventDestroy(lg.begin[i]);
        cudaEventDestroy(lg.end[i]);
    }
    model_fini(&m);
    return status;
}
