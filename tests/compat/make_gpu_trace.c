/* make_gpu_trace.c: writes a stepprof trace with synthetic GPU records for
 * the viewer compatibility suite (tests/compat/run_compat.py), until real
 * CUPTI traces can be made on the test machines. The result is built by hand
 * with tests/fixture.h as tests/export/test_json_gpu.c does: one training
 * thread with three ProfileSteps (DataLoader, forward, backward, optimizer,
 * operators, an nccl:all_reduce), each op launching kernels, a copy and a memset on device 0,
 * GPU memory allocations and frees, an op supplement with shapes, and the
 * device properties of an H100-like GPU. It is exported with sp__export,
 * whose distributedInfo and file content are the library's own; the caller
 * picks the file name (and RANK / WORLD_SIZE in the environment).
 *
 * With --overlap, the all-reduce's kernel runs instead on a stream of its
 * own during the backward GEMM, overlapping it by rank/3 of its 300 us
 * (rank 0 not at all, rank 3 wholly), so that a comm/compute overlap
 * analysis has a different known answer per rank.
 *
 * Usage: make_gpu_trace OUT.pt.trace.json[.gz] [STEPS] [--overlap] (gzipped by the name) */
#include "export.h"
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t corr; /* correlation ids, one per runtime call */

static sp__device_props h100(void)
{
    sp__device_props p = {0};
    snprintf(p.name, sizeof p.name, "NVIDIA H100 80GB HBM3 (synthetic)");
    p.total_global_mem = 85899345920ull;
    p.compute_major = 9;
    p.max_threads_per_block = 1024;
    p.max_threads_per_sm = 2048;
    p.regs_per_block = 65536;
    p.regs_per_sm = 65536;
    p.warp_size = 32;
    p.shared_per_block = 49152;
    p.shared_per_sm = 233472;
    p.shared_per_block_optin = 232448;
    p.num_sms = 132;
    return p;
}

/* A launch at t (ns) on the main thread and its kernel, which runs
 * [t + 5000, t + 5000 + dur) on stream. */
static void launch_on(sp_result *r, int64_t t, const char *kernel, int64_t dur, uint32_t grid,
                      uint32_t block, uint32_t stream)
{
    sp__thread *m = &r->threads[0];
    corr++;
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", t, t + 4000, corr);
    fixture_add_device(r, kernel, SP_EVENT_KERNEL, t + 5000, t + 5000 + dur, 0, stream, corr);
    r->devices[r->device_count - 1].detail.kernel =
        (sp__kernel_detail){{grid, 1, 1}, {block, 1, 1}, 64, 8192, 0, 0, 0, 0, 0};
}

static void launch(sp_result *r, int64_t t, const char *kernel, int64_t dur, uint32_t grid,
                   uint32_t block)
{
    launch_on(r, t, kernel, dur, grid, block, 7);
}

static void copy(sp_result *r, int64_t t, sp_event_type type, int64_t dur, uint64_t bytes)
{
    sp__thread *m = &r->threads[0];
    corr++;
    int is_copy = type == SP_EVENT_MEMCPY;
    fixture_add_runtime(r, m, is_copy ? "cudaMemcpyAsync_v3020" : "cudaMemsetAsync_v3020", t,
                        t + 3000, corr);
    fixture_add_device(r, is_copy ? "MEMCPY_HtoD" : "MEMSET", type, t + 4000, t + 4000 + dur, 0,
                       7, corr);
    sp__device_rec *d = &r->devices[r->device_count - 1];
    d->bytes = bytes;
    if (is_copy) d->detail.copy = (sp__copy_detail){0, 0, 2}; /* HtoD, Pageable -> Device */
    else d->detail.set = (sp__set_detail){2, 0};               /* Device */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: make_gpu_trace OUT.pt.trace.json [STEPS] [--overlap]\n");
        return 2;
    }
    int steps = argc > 2 ? atoi(argv[2]) : 3;
    int overlap = argc > 3 && strcmp(argv[3], "--overlap") == 0;
    if (steps < 1 || steps > 100) steps = 3;
    const int64_t step_ns = 10000000; /* 10 ms */
    sp_result *r = sp__result_new();
    if (!r) return 1;
    int64_t s0 = sp__base_time_ns() + 1000000000ll;
    r->span_start_ns = s0;
    r->span_end_ns = s0 + steps * step_ns + 1000000;
    r->meta.pid = 4242;
    r->meta.profile_memory = 1;
    r->meta.record_shapes = 1;
    snprintf(r->meta.process_name, sizeof r->meta.process_name, "train_gpu");
    /* Where it ran, from RANK / WORLD_SIZE as a collected span takes it: the
     * compat suite runs four of these as the ranks of one job. */
    sp__dist_meta_fill(&r->meta, NULL);

    static fixture_range ranges[16 * 100];
    size_t n = 0;
    for (int s = 0; s < steps; s++) {
        int64_t b = s0 + 500000 + s * step_ns;
        static char names[100][32];
        snprintf(names[s], sizeof names[s], "ProfileStep#%d", 10 + s);
        ranges[n++] = (fixture_range){names[s], SP_EVENT_PROFILE_STEP, b, b + step_ns - 100000};
        ranges[n++] = (fixture_range){"_DataLoaderIterSingleProcess", SP_EVENT_DATALOADER, b + 10000,
                                      b + 1000000};
        ranges[n++] = (fixture_range){"aten::to", SP_EVENT_OPERATOR, b + 1010000, b + 1200000};
        ranges[n++] = (fixture_range){"forward", SP_EVENT_FORWARD, b + 1300000, b + 4000000};
        ranges[n++] = (fixture_range){"aten::linear", SP_EVENT_OPERATOR, b + 1400000, b + 2500000};
        ranges[n++] = (fixture_range){"aten::addmm", SP_EVENT_OPERATOR, b + 1500000, b + 2400000};
        ranges[n++] = (fixture_range){"aten::relu", SP_EVENT_OPERATOR, b + 2600000, b + 3500000};
        ranges[n++] = (fixture_range){"backward", SP_EVENT_BACKWARD, b + 4100000, b + 7500000};
        ranges[n++] = (fixture_range){"AddmmBackward0", SP_EVENT_OPERATOR, b + 4200000, b + 6000000};
        ranges[n++] = (fixture_range){"aten::mm", SP_EVENT_OPERATOR, b + 4300000, b + 5900000};
        ranges[n++] = (fixture_range){"aten::zero_", SP_EVENT_OPERATOR, b + 6100000, b + 7000000};
        ranges[n++] = (fixture_range){"nccl:all_reduce", SP_EVENT_COMMUNICATION, b + 7050000,
                                      b + 7450000};
        ranges[n++] = (fixture_range){"optimizer", SP_EVENT_OPTIMIZATION, b + 7600000, b + 9500000};
        ranges[n++] = (fixture_range){"aten::add_", SP_EVENT_OPERATOR, b + 7700000, b + 9000000};
    }
    fixture_add_thread(r, 4242, "main", ranges, n);
    fixture_range loader[] = {{"load_batch", SP_EVENT_USER_DEFINED, s0 + 600000, s0 + 900000}};
    fixture_add_thread(r, 4250, "loader", loader, 1);
    sp__thread *m = &r->threads[0];

    uint64_t allocated = 0, reserved = 64ull << 20;
    for (int s = 0; s < steps; s++) {
        int64_t b = s0 + 500000 + s * step_ns;
        copy(r, b + 1020000, SP_EVENT_MEMCPY, 150000, 4u << 20);
        fixture_add_op(r, m, b + 1510000, "addmm", "train.py(42);model.py(7)",
                       "input:float:512|mat1:float:64x256|mat2:float:256x512");
        launch(r, b + 1600000, "ampere_sgemm_128x64_tn", 700000, 264, 256);
        launch(r, b + 2700000, "vectorized_elementwise_kernel<relu>", 200000, 528, 128);
        launch(r, b + 4400000, "ampere_sgemm_64x64_nn", 1200000, 132, 256);
        copy(r, b + 6200000, SP_EVENT_MEMSET, 50000, 1u << 20);
        fixture_add_op(r, m, b + 7060000, "nccl:all_reduce", "train.py(50)", "input:float:1024x256");
        if (overlap) /* starts rank x 100 us before the backward GEMM ends (b + 5605000) */
            launch_on(r, b + 5600000 - (r->meta.rank % 4) * 100000,
                      "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 300000, 4, 512, 13);
        else
            launch(r, b + 7100000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 300000, 4, 512);
        launch(r, b + 7800000, "multi_tensor_apply_kernel<sgd>", 300000, 66, 512);
        /* An activation allocated in forward, freed in backward. */
        uint64_t addr = 0x7f0000000000ull + (uint64_t)s * 0x100000;
        allocated += 1u << 20;
        fixture_add_mem(r, m, b + 1450000, 0, "Place(gpu:0)", addr, 1 << 20, allocated, reserved,
                        allocated, reserved);
        allocated -= 1u << 20;
        fixture_add_mem(r, m, b + 5000000, 1, "Place(gpu:0)", addr, -(1 << 20), allocated,
                        reserved, allocated + (1u << 20), reserved);
        fixture_add_mem(r, m, b + 1050000, 0, "Place(cpu)", 0x5500000000ull + (uint64_t)s, 4096,
                        4096, 4096, 4096, 4096);
        fixture_add_mem(r, m, b + 1150000, 1, "Place(cpu)", 0x5500000000ull + (uint64_t)s, -4096,
                        0, 4096, 4096, 4096);
    }
    /* Memory events must be in time order per thread. */
    for (size_t i = 1; i < m->mem_count; i++)
        for (size_t j = i; j > 0 && m->mems[j - 1].ts_ns > m->mems[j].ts_ns; j--) {
            sp__mem_event t = m->mems[j];
            m->mems[j] = m->mems[j - 1];
            m->mems[j - 1] = t;
        }

    r->device_props = sp__alloc(sizeof *r->device_props);
    if (!r->device_props) return 1;
    r->device_props[0] = h100();
    r->device_prop_count = 1;
    if (sp__attribute(r) != 0) {
        fprintf(stderr, "make_gpu_trace: attribution failed\n");
        return 1;
    }
    sp_status st = sp__export(r, argv[1], SP_FORMAT_AUTO);
    sp__result_free(r);
    if (st != SP_OK) {
        fprintf(stderr, "make_gpu_trace: %s\n", sp_last_error());
        return 1;
    }
    printf("%s\n", argv[1]);
    (void)check__passed;
    (void)check__failed;
    return check__failed_in_test ? 1 : 0;
}
