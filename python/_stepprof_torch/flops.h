/* flops.h: the FLOPs torch's profiler gives an operator (with_flops). */
#ifndef STEPPROF_TORCH_FLOPS_H
#define STEPPROF_TORCH_FLOPS_H

#include <ATen/core/ivalue.h>

#include <cstdint>

namespace spx {

/* The FLOPs of one run of the operator named name with these inputs, as
 * torch counts them (torch/csrc/profiler/util.cpp, computeFlops): matrix
 * products, 2D convolutions, elementwise mul and add; 0 for any other
 * operator or inputs it cannot read. */
uint64_t torch_flops(const char *name, c10::ArrayRef<c10::IValue> inputs);

} // namespace spx

#endif
