/* occupancy.c: stepprof's own occupancy calculator, used for the kernel
 * metrics of trace-format.md §6 by the JSON and protobuf writers. It follows
 * the shape of NVIDIA's occupancy calculator but is written from the
 * published limits, not copied from cuda_occupancy.h. Assumptions:
 *  - The resident blocks of one SM are the minimum of four limits: warps
 *    (maxThreadsPerMultiprocessor / warpSize warps, a block taking
 *    ceil(threads / warpSize) warps), registers, shared memory and the
 *    per-SM block limit. A block larger than maxThreadsPerBlock, a kernel
 *    using more than 255 registers per thread, or more shared memory per
 *    block than the (opt-in) per-block limit gives 0.
 *  - Registers are allocated per warp in units of 256: a warp takes
 *    ceil(regs * warpSize / 256) * 256 of regsPerMultiprocessor, and an SM
 *    holds floor(regsPerMultiprocessor / that) warps, i.e. whole blocks of
 *    them. Register-file sub-partitions and the warp allocation granularity
 *    of older architectures are ignored (the estimate may be slightly high
 *    for kernels close to a register limit). A block that needs more than
 *    regsPerBlock registers gives 0. 0 registers (unknown) sets no limit.
 *  - Shared memory per block is static + dynamic, plus 1 KiB that the CUDA
 *    runtime reserves per block on compute capability 8.0 and later, rounded
 *    up to 128 bytes; the SM holds sharedMemPerMultiprocessor of it (the
 *    largest carveout: the kernel's preferred carveout is not recorded).
 *  - The per-SM block limit is the device's own when known, else by compute
 *    capability: 32 for 7.0, 8.0, 9.0 and 10.x; 16 for 7.5, 8.6, 8.9 and
 *    12.x; 32 otherwise.
 *  - Properties reported as 0 (unknown) set no limit, except numSms and
 *    maxThreadsPerMultiprocessor, without which nothing is computed.
 * Blocks per SM and warps per SM are the launch's averages (grid / SMs, and
 * that times block threads / 32, as Kineto computes them), and occupancy
 * counts at most the blocks the launch actually has per SM. */
#include "occupancy.h"

#include <stdint.h>

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint32_t max_blocks_per_sm(const sp__device_props *p)
{
    if (p->max_blocks_per_sm) return p->max_blocks_per_sm;
    uint32_t major = p->compute_major, minor = p->compute_minor;
    if (major == 8) return minor == 0 ? 32 : 16;
    if (major == 9 || major == 10) return 32;
    if (major == 7) return minor == 0 ? 32 : 16; /* V100 32, Turing 16 */
    if (major == 12) return 16;
    return 32;
}

int sp__kernel_active_blocks(const sp__device_props *p, const sp__kernel_detail *k)
{
    if (!p || !k) return 0;
    uint64_t threads = (uint64_t)k->block[0] * k->block[1] * k->block[2];
    if (threads == 0 || p->max_threads_per_sm == 0) return 0;
    if (p->max_threads_per_block && threads > p->max_threads_per_block) return 0;
    uint64_t warp_size = p->warp_size ? p->warp_size : 32;
    uint64_t warps_per_block = div_up(threads, warp_size);
    uint64_t active = (p->max_threads_per_sm / warp_size) / warps_per_block;
    active = min_u64(active, max_blocks_per_sm(p));

    if (k->registers > 255) return 0;
    if (k->registers && p->regs_per_sm) {
        uint64_t per_warp = div_up((uint64_t)k->registers * warp_size, 256) * 256;
        if (p->regs_per_block && per_warp * warps_per_block > p->regs_per_block) return 0;
        active = min_u64(active, (p->regs_per_sm / per_warp) / warps_per_block);
    }

    uint64_t user_shared = (uint64_t)k->static_shared + k->dynamic_shared;
    uint64_t block_limit =
        p->shared_per_block_optin ? p->shared_per_block_optin : p->shared_per_block;
    if (block_limit && user_shared > block_limit) return 0;
    uint64_t shared = user_shared + (p->compute_major >= 8 ? 1024 : 0);
    if (shared && p->shared_per_sm)
        active = min_u64(active, p->shared_per_sm / (div_up(shared, 128) * 128));
    return (int)active;
}

int sp__kernel_occupancy(const sp__device_props *p, const sp__kernel_detail *k,
                         double *blocks_per_sm, double *warps_per_sm, double *occupancy)
{
    *blocks_per_sm = *warps_per_sm = *occupancy = 0.0;
    if (!p || !k || p->num_sms == 0 || p->max_threads_per_sm == 0) return -1;
    double blocks = (double)k->grid[0] * (double)k->grid[1] * (double)k->grid[2];
    double threads = (double)k->block[0] * (double)k->block[1] * (double)k->block[2];
    *blocks_per_sm = blocks / (double)p->num_sms;
    *warps_per_sm = *blocks_per_sm * threads / 32.0;
    double active = (double)sp__kernel_active_blocks(p, k);
    double resident = active < *blocks_per_sm ? active : *blocks_per_sm;
    *occupancy = resident * threads / (double)p->max_threads_per_sm;
    return 0;
}
