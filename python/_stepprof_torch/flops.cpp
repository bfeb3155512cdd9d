/* flops.cpp: torch's FLOPs formulas, written from what torch's profiler
 * reports for each operator (key_averages()[...].flops, torch 2.15):
 *   aten::mm, aten::addmm   [m, k] x [k, n]        2 m k n
 *   aten::bmm, aten::baddbmm [b, m, k] x [b, k, n] 2 b m k n
 *   aten::conv2d  input [N, C, H, W], weight [O, C/g, kh, kw], stride,
 *                 padding, dilation:    2 N O Ho Wo (C/g) kh kw
 *   aten::mul, aten::add    the first input's element count
 * (tests/python/test_torch_capture.py holds them to torch's). */
#include "flops.h"

#include <cstring>
#include <vector>

namespace spx {
namespace {

bool sizes(const c10::IValue &v, std::vector<int64_t> &out)
{
    if (!v.isTensor()) return false;
    const at::Tensor &t = v.toTensor();
    if (!t.defined() || t.is_nested()) return false;
    try {
        auto s = t.sizes();
        out.assign(s.begin(), s.end());
    } catch (const std::exception &) {
        return false;
    }
    return true;
}

/* A conv argument: an int list of 2 (or 1, repeated), else fallback. */
void pair_of(const c10::IValue &v, int64_t fallback, int64_t out[2])
{
    out[0] = out[1] = fallback;
    if (!v.isIntList()) return;
    auto l = v.toIntVector();
    if (l.size() == 1) out[0] = out[1] = l[0];
    if (l.size() >= 2) out[0] = l[0], out[1] = l[1];
}

uint64_t matmul(c10::ArrayRef<c10::IValue> in, size_t a, size_t b, size_t rank)
{
    std::vector<int64_t> x, y;
    if (in.size() <= b || !sizes(in[a], x) || !sizes(in[b], y) || x.size() != rank || y.size() != rank)
        return 0;
    uint64_t f = 2 * (uint64_t)x[rank - 2] * (uint64_t)x[rank - 1] * (uint64_t)y[rank - 1];
    return rank == 3 ? f * (uint64_t)x[0] : f;
}

uint64_t conv2d(c10::ArrayRef<c10::IValue> in)
{
    std::vector<int64_t> x, w;
    if (in.size() < 2 || !sizes(in[0], x) || !sizes(in[1], w) || x.size() != 4 || w.size() != 4) return 0;
    int64_t stride[2], pad[2], dil[2];
    pair_of(in.size() > 3 ? in[3] : c10::IValue(), 1, stride);
    pair_of(in.size() > 4 ? in[4] : c10::IValue(), 0, pad);
    pair_of(in.size() > 5 ? in[5] : c10::IValue(), 1, dil);
    int64_t out[2];
    for (int i = 0; i < 2; i++) {
        if (stride[i] <= 0) return 0;
        out[i] = (x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1) / stride[i] + 1;
        if (out[i] <= 0) return 0;
    }
    return 2 * (uint64_t)x[0] * (uint64_t)w[0] * (uint64_t)out[0] * (uint64_t)out[1] * (uint64_t)w[1] *
           (uint64_t)w[2] * (uint64_t)w[3];
}

uint64_t elementwise(c10::ArrayRef<c10::IValue> in)
{
    std::vector<int64_t> x;
    if (in.empty() || !sizes(in[0], x)) return 0;
    uint64_t n = 1;
    for (int64_t d : x) n *= (uint64_t)(d < 0 ? 0 : d);
    return n;
}

} // namespace

uint64_t torch_flops(const char *name, c10::ArrayRef<c10::IValue> inputs)
{
    if (std::strncmp(name, "aten::", 6) != 0) return 0;
    const char *op = name + 6;
    if (!std::strcmp(op, "mm")) return matmul(inputs, 0, 1, 2);
    if (!std::strcmp(op, "addmm")) return matmul(inputs, 1, 2, 2);
    if (!std::strcmp(op, "bmm")) return matmul(inputs, 0, 1, 3);
    if (!std::strcmp(op, "baddbmm")) return matmul(inputs, 1, 2, 3);
    if (!std::strcmp(op, "conv2d")) return conv2d(inputs);
    if (!std::strcmp(op, "mul") || !std::strcmp(op, "add")) return elementwise(inputs);
    return 0;
}

} // namespace spx
