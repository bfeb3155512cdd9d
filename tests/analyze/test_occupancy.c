/* test_occupancy.c: hand-worked cases of the occupancy calculator
 * (src/analyze/occupancy.c, trace-format.md §6 "Kernel metrics"), one per
 * limit (registers, shared memory, per-SM blocks, warps), the case where the
 * launch has fewer blocks per SM than could be resident, the compute
 * capability defaults and the inputs that give 0. */
#include "check.h"
#include "occupancy.h"

#include <math.h>

/* An A100 (8.0): 108 SMs, 2048 threads and 64 Ki registers per SM, 164 KiB
 * of shared memory per SM (163 KiB opt-in per block). */
static sp__device_props a100(void)
{
    sp__device_props p = {0};
    p.compute_major = 8;
    p.num_sms = 108;
    p.max_threads_per_block = 1024;
    p.max_threads_per_sm = 2048;
    p.regs_per_block = 65536;
    p.regs_per_sm = 65536;
    p.warp_size = 32;
    p.shared_per_block = 48 * 1024;
    p.shared_per_sm = 164 * 1024;
    p.shared_per_block_optin = 163 * 1024;
    return p;
}

static sp__kernel_detail launch(uint32_t grid, uint32_t block, uint32_t regs, uint32_t shared)
{
    sp__kernel_detail k = {0};
    k.grid[0] = grid, k.grid[1] = 1, k.grid[2] = 1;
    k.block[0] = block, k.block[1] = 1, k.block[2] = 1;
    k.registers = regs;
    k.static_shared = shared;
    return k;
}

#define CHECK_DOUBLE(expected, actual) CHECK(fabs((double)(expected) - (actual)) < 1e-12)

static void test_occupancy_register_limited(void)
{
    sp__device_props p = a100();
    /* 128 regs x 32 lanes = 4096 per warp: 16 warps fit, 2 blocks of 8 warps
     * (warps alone would allow 8, shared memory 164). */
    sp__kernel_detail k = launch(1080, 256, 128, 0);
    double blocks, warps, occ;
    CHECK_EQ(2, sp__kernel_active_blocks(&p, &k));
    CHECK_EQ(0, sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ));
    CHECK_DOUBLE(10.0, blocks);
    CHECK_DOUBLE(80.0, warps);
    CHECK_DOUBLE(0.25, occ); /* 2 * 256 / 2048 */
    /* 33 regs: 1056 per warp rounds up to 1280, 51 warps fit: 6 blocks. */
    k.registers = 33;
    CHECK_EQ(6, sp__kernel_active_blocks(&p, &k));
    sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ);
    CHECK_DOUBLE(0.75, occ);
    /* A block needing more than regsPerBlock cannot launch. */
    p.regs_per_block = 32768;
    k = launch(1080, 1024, 64, 0); /* 2048 regs per warp x 32 warps = 65536 */
    CHECK_EQ(0, sp__kernel_active_blocks(&p, &k));
}

static void test_occupancy_shared_memory_limited(void)
{
    sp__device_props p = a100();
    /* 20000 static + 30000 dynamic + 1 KiB reserved = 51024, rounded to 128
     * bytes: 51072; 167936 / 51072 = 3 blocks (warps allow 16). */
    sp__kernel_detail k = launch(1080, 128, 0, 20000);
    k.dynamic_shared = 30000;
    double blocks, warps, occ;
    CHECK_EQ(3, sp__kernel_active_blocks(&p, &k));
    sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ);
    CHECK_DOUBLE(0.1875, occ); /* 3 * 128 / 2048 */
    CHECK_EQ(19, (long long)(100 * occ + 0.5));
    /* Before 8.0 nothing is reserved: 50048 bytes, 167936 / 50048 = 3 too;
     * with 40000 bytes: 4 on 7.x (40064 each), 4 on 8.0 (41088 each). */
    k = launch(1080, 128, 0, 40000);
    CHECK_EQ(4, sp__kernel_active_blocks(&p, &k));
    p.shared_per_sm = 5 * 40064; /* exactly five 7.x blocks, but only four 8.x ones */
    CHECK_EQ(4, sp__kernel_active_blocks(&p, &k));
    p.compute_major = 7;
    p.compute_minor = 0;
    CHECK_EQ(5, sp__kernel_active_blocks(&p, &k));
    /* More than the opt-in per-block limit cannot launch. */
    p = a100();
    k = launch(1080, 128, 0, 163 * 1024 + 1);
    CHECK_EQ(0, sp__kernel_active_blocks(&p, &k));
}

static void test_occupancy_block_limited(void)
{
    /* An 8.6 part: 1536 threads per SM, 16 blocks per SM from its compute
     * capability. 1-warp blocks: warps allow 48, registers 128, shared
     * memory 164, so the block limit wins. */
    sp__device_props p = a100();
    p.compute_minor = 6;
    p.num_sms = 84;
    p.max_threads_per_sm = 1536;
    sp__kernel_detail k = launch(10000, 32, 16, 0);
    double blocks, warps, occ;
    CHECK_EQ(16, sp__kernel_active_blocks(&p, &k));
    sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ);
    CHECK_DOUBLE(10000.0 / 84, blocks);
    CHECK_DOUBLE(10000.0 / 84, warps);
    CHECK_EQ(33, (long long)(100 * occ + 0.5)); /* 16 * 32 / 1536 */
    /* The device's own limit wins over the compute capability's. */
    p.max_blocks_per_sm = 24;
    CHECK_EQ(24, sp__kernel_active_blocks(&p, &k));
}

static void test_occupancy_warp_limited(void)
{
    /* 1024-thread blocks: 32 warps each, 64 per SM: 2 blocks. */
    sp__device_props p = a100();
    sp__kernel_detail k = launch(216, 1024, 0, 0);
    double blocks, warps, occ;
    CHECK_EQ(2, sp__kernel_active_blocks(&p, &k));
    sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ);
    CHECK_DOUBLE(2.0, blocks);
    CHECK_DOUBLE(64.0, warps);
    CHECK_DOUBLE(1.0, occ);
    /* A partial warp takes a whole one: 33 threads are 2 warps, 32 blocks
     * would fit by warps, the 8.0 block limit is 32 as well. */
    k = launch(216, 33, 0, 0);
    CHECK_EQ(32, sp__kernel_active_blocks(&p, &k));
    k = launch(216, 65, 0, 0); /* 3 warps: 21 blocks */
    CHECK_EQ(21, sp__kernel_active_blocks(&p, &k));
}

static void test_occupancy_fewer_blocks_than_active(void)
{
    /* 54 blocks on 108 SMs: half a block per SM, though 8 could be resident. */
    sp__device_props p = a100();
    sp__kernel_detail k = launch(54, 256, 0, 0);
    double blocks, warps, occ;
    CHECK_EQ(8, sp__kernel_active_blocks(&p, &k));
    sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ);
    CHECK_DOUBLE(0.5, blocks);
    CHECK_DOUBLE(4.0, warps);
    CHECK_DOUBLE(0.0625, occ); /* 0.5 * 256 / 2048 */
    CHECK_EQ(6, (long long)(100 * occ + 0.5));
}

static void test_occupancy_trace_format_example(void)
{
    /* trace-format.md §10.1: grid 165 on 132 SMs, 256 threads, 96 regs. */
    sp__device_props p = a100();
    p.compute_major = 9;
    p.num_sms = 132;
    p.shared_per_sm = 228 * 1024;
    p.shared_per_block_optin = 227 * 1024;
    sp__kernel_detail k = launch(165, 256, 96, 16384);
    double blocks, warps, occ;
    sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ);
    CHECK_DOUBLE(1.25, blocks);
    CHECK_DOUBLE(10.0, warps);
    CHECK_EQ(16, (long long)(100 * occ + 0.5));
}

static void test_occupancy_block_limit_by_compute_capability(void)
{
    static const struct {
        uint32_t major, minor, blocks;
    } cases[] = {
        {8, 0, 32},  {9, 0, 32}, {10, 0, 32}, {10, 3, 32}, {8, 6, 16}, {8, 9, 16},
        {12, 0, 16}, {7, 0, 32}, {7, 5, 16},  {6, 1, 32},  {5, 2, 32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sp__device_props p = a100();
        p.compute_major = cases[i].major;
        p.compute_minor = cases[i].minor;
        p.max_threads_per_sm = 4096; /* 128 one-warp blocks by warps */
        sp__kernel_detail k = launch(1, 32, 0, 0);
        CHECK_EQ(cases[i].blocks, sp__kernel_active_blocks(&p, &k));
    }
}

static void test_occupancy_unusable_inputs_give_zero(void)
{
    sp__device_props p = a100();
    sp__kernel_detail k = launch(108, 256, 256, 0); /* over 255 registers */
    double blocks = 1, warps = 1, occ = 1;
    CHECK_EQ(0, sp__kernel_active_blocks(&p, &k));
    CHECK_EQ(0, sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ));
    CHECK_DOUBLE(1.0, blocks);
    CHECK_DOUBLE(0.0, occ);
    k = launch(108, 2048, 0, 0); /* over maxThreadsPerBlock */
    CHECK_EQ(0, sp__kernel_active_blocks(&p, &k));
    k = launch(108, 0, 0, 0); /* empty block */
    CHECK_EQ(0, sp__kernel_active_blocks(&p, &k));
    k = launch(108, 256, 0, 0);
    p.num_sms = 0; /* unknown device: nothing computed, nothing infinite */
    CHECK_EQ(-1, sp__kernel_occupancy(&p, &k, &blocks, &warps, &occ));
    CHECK_DOUBLE(0.0, blocks);
    CHECK_DOUBLE(0.0, warps);
    CHECK_DOUBLE(0.0, occ);
    CHECK_EQ(-1, sp__kernel_occupancy(NULL, &k, &blocks, &warps, &occ));
    CHECK_EQ(0, sp__kernel_active_blocks(NULL, &k));
}

int main(void)
{
    RUN_TEST(test_occupancy_register_limited);
    RUN_TEST(test_occupancy_shared_memory_limited);
    RUN_TEST(test_occupancy_block_limited);
    RUN_TEST(test_occupancy_warp_limited);
    RUN_TEST(test_occupancy_fewer_blocks_than_active);
    RUN_TEST(test_occupancy_trace_format_example);
    RUN_TEST(test_occupancy_block_limit_by_compute_capability);
    RUN_TEST(test_occupancy_unusable_inputs_give_zero);
    return TEST_SUMMARY();
}
