#include "test_kernel_family.hpp"

#include <fmt/format.h>

namespace moetune::test {

std::vector<jit::EmbeddedFile> tiny_kernel_headers() {
  return {
      {"tiny_portability.h", R"(#pragma once
// Test-only portability layer: NVRTC has CUDA's keywords built in; hipRTC and clang-22
// (-nogpuinc) get them from attributes and builtins.
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define MT_KERNEL __global__
#define MT_DEVICE __device__
#define MT_SHARED __shared__
MT_DEVICE inline unsigned mt_thread_x() { return threadIdx.x; }
MT_DEVICE inline unsigned mt_block_x() { return blockIdx.x; }
MT_DEVICE inline void mt_barrier() { __syncthreads(); }
#else
#define MT_KERNEL __attribute__((global))
#define MT_DEVICE __attribute__((device))
#define MT_SHARED __attribute__((shared))
MT_DEVICE inline unsigned mt_thread_x() { return __builtin_amdgcn_workitem_id_x(); }
MT_DEVICE inline unsigned mt_block_x() { return __builtin_amdgcn_workgroup_id_x(); }
MT_DEVICE inline void mt_barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
#endif
)"},
      {"scale_kernel.h", R"(#pragma once
#include "tiny_portability.h"
#ifndef MT_OFFSET
#define MT_OFFSET 0
#endif
namespace mt_test {
template <int Factor, int Block>
struct ScaleConfig {
  static constexpr int factor = Factor;
  static constexpr int block = Block;
};
template <class Config>
MT_KERNEL void scale_shift(float* out, const float* in, int n) {
  MT_SHARED float tile[Config::block];
  unsigned const t = mt_thread_x();
  int const i = static_cast<int>(mt_block_x() * Config::block + t);
  tile[t] = i < n ? in[i] * Config::factor : 0.0f;
  mt_barrier();
  int const j = static_cast<int>(mt_block_x() * Config::block + (t + 1) % Config::block);
  if (i < n) out[i] = (j < n ? tile[(t + 1) % Config::block] : 0.0f) + MT_OFFSET;
}
}  // namespace mt_test
)"},
  };
}

std::string scale_kernel_name(int factor, int block) {
  return fmt::format("mt_test::scale_shift<mt_test::ScaleConfig<{}, {}>>", factor, block);
}

jit::KernelSource scale_unit(int factor, int block) {
  return {fmt::format("scale_f{}_b{}", factor, block),
          "#include \"scale_kernel.h\"\n",
          {scale_kernel_name(factor, block)},
          {}};
}

jit::KernelSource broken_unit() {
  return {"broken",
          "#include \"scale_kernel.h\"\n"
          "namespace mt_test {\n"
          "MT_KERNEL void broken(float* out) { out[0] = 1.0f this_is_a_syntax_error; }\n"
          "}\n",
          {"mt_test::broken"},
          {}};
}

}  // namespace moetune::test
