#pragma once
// A tiny kernel family for the JIT tests, self-contained in the style of the real kernels: its
// own portability header (no host or vendor headers), one template, one generated unit per
// variant. It compiles with NVRTC, hipRTC and clang-22 alike.
#include <string>
#include <vector>

#include "autotune/jit/embedded_kernels.hpp"
#include "autotune/jit/kernel_source.hpp"

namespace moetune::test {

// "tiny_portability.h" and "scale_kernel.h".
[[nodiscard]] std::vector<jit::EmbeddedFile> tiny_kernel_headers();

// out[i] = in[j] * Factor + MT_OFFSET, where j is i's right neighbour within its block of
// Block threads (wrapping) — exercises shared memory and a barrier. Grid: ceil(n / Block).
[[nodiscard]] jit::KernelSource scale_unit(int factor, int block);

// The lowered-name expression of scale_unit's kernel.
[[nodiscard]] std::string scale_kernel_name(int factor, int block);

// A unit with a syntax error on a known line.
[[nodiscard]] jit::KernelSource broken_unit();

}  // namespace moetune::test
