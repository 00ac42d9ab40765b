#pragma once
// The companion kernel of stage two, timed as part of the MoE. (The atomic stage two's
// accumulator is cleared by stage one: moe_stage1.cuh.)
#include "moe_test_break.cuh"
#include "moetune_portability.h"

namespace moetune {

constexpr int aux_threads = 256;

// y[t][c] = bf16(sum_{k<topk} partial[t*topk+k][c]), summed in k order (deterministic).
// The atomic stage two calls it with topk = 1 to round its fp32 accumulator to bf16.
// Each thread does 4 columns. Grid: ceil(M*H/4 / 256).
__global__ void MOETUNE_LAUNCH_BOUNDS(aux_threads, 0)
    moe_reduce_y(const float* __restrict__ partial, u16* __restrict__ y, i32 M, i32 topk, i32 H) {
  join_kernel_chain();
  i64 const q = static_cast<i64>(block_x()) * aux_threads + thread_x();
  i64 const per_row = H / 4;
  if (q >= static_cast<i64>(M) * per_row) return;
  i64 const t = q / per_row;
  i64 const c = (q % per_row) * 4;
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  for (int k = 0; k < topk; ++k) {
    u32x4 const v = *reinterpret_cast<const u32x4*>(partial + (t * topk + k) * H + c);
    s0 += __builtin_bit_cast(float, v.x);
    s1 += __builtin_bit_cast(float, v.y);
    s2 += __builtin_bit_cast(float, v.z);
    s3 += __builtin_bit_cast(float, v.w);
  }
  // TEST ONLY (moe_test_break.cuh): discarded unless a test asked for the bug.
  if constexpr (test_break == test_break_unwritten_output_row) {
    if (t == M - 1) return;
  }
  if constexpr (test_break == test_break_wrong_output_element ||
                test_break == test_break_wrong_output_above_m) {
    if (q == 0 && (test_break == test_break_wrong_output_element || M > test_break_above_m)) {
      s0 += 1.0f + fabs_f32(s0);
    }
  }
  *reinterpret_cast<u32x2*>(y + t * H + c) = u32x2{pack_bf16x2(s0, s1), pack_bf16x2(s2, s3)};
}

}  // namespace moetune
