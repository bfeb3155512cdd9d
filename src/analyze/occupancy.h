/* occupancy.h: the kernel metrics of trace-format.md §6 ("Kernel metrics"):
 * blocks and warps per SM and the estimated achieved occupancy, from a
 * kernel's launch configuration and its device's properties. The JSON and
 * protobuf writers both call it, so the two files agree. */
#ifndef SP_ANALYZE_OCCUPANCY_H
#define SP_ANALYZE_OCCUPANCY_H

#include "gpu.h"

/* The most blocks of kernel k that can be resident on one SM of device p at
 * once (limited by warps, registers, shared memory and the per-SM block
 * limit); 0 when the kernel cannot run there or p says too little. */
int sp__kernel_active_blocks(const sp__device_props *p, const sp__kernel_detail *k);

/* Computes, for kernel k on device p:
 *   *blocks_per_sm = (gx*gy*gz) / numSms
 *   *warps_per_sm  = *blocks_per_sm * (bx*by*bz) / 32
 *   *occupancy     = min(active blocks, *blocks_per_sm) * (bx*by*bz)
 *                    / maxThreadsPerMultiprocessor, a fraction in [0, 1]
 * (the JSON arg "est. achieved occupancy %" is round(100 * *occupancy)).
 * With p NULL or lacking an SM count or thread limit, every output is 0 and
 * the call returns -1; otherwise 0. Outputs are always finite.
 * Threads: any. */
int sp__kernel_occupancy(const sp__device_props *p, const sp__kernel_detail *k,
                         double *blocks_per_sm, double *warps_per_sm, double *occupancy);

#endif
