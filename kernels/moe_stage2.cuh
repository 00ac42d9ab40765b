#pragma once
// Stage two: y[t] = sum_k w_k * (h[slot] · w2_e^T) over the sorted blocks (slot order).
// Grid: (max sorted blocks, ceil(H / block_n), ksplit), x and y swapped tile-major; CTAs past
// num_blocks exit at once. sort_halves: two grid rows per sorted block of the 2 x block_m sort.
//   atomic (Cfg::reduce == 0): fp32 atomic adds into an fp32 accumulator acc[M][H] (held in
//     `partial`), which stage one cleared (moe_stage1.cuh); ksplit CTAs along z each add their K range;
//     moe_reduce_y (topk = 1) then rounds acc to bf16 y once. Adding in bf16 directly would
//     round at every add: where a token's topk contributions cancel, y then drifts by
//     2^-9 x the sum of their magnitudes, far outside the error budget.
//   reduce (Cfg::reduce == 1): each slot's fp32 row goes to partial[M*topk][H] (plain stores,
//     every real slot row fully written), then moe_reduce_y sums the topk rows of each token
//     in a fixed order -> deterministic.
// The routing weight multiplies here unless stage one applied it (doweight_stage1).
#include "moe_gemm.cuh"
#include "moe_gemv_gemm.cuh"
#include "moe_staged_gemm.cuh"
#include "moe_swap_gemm.cuh"
#include "moe_wgmma_gemm.cuh"
#include "moe_test_break.cuh"

namespace moetune {

extern __shared__ __attribute__((aligned(16))) u8 moetune_smem[];

template <class Cfg>
__global__ void MOETUNE_LAUNCH_BOUNDS(Cfg::threads, Cfg::launch_min_blocks)
    moe_stage2(const u8* __restrict__ h, const u8* __restrict__ h_scales, const u8* __restrict__ w2,
               const u8* __restrict__ w2_scales, const i32* __restrict__ sorted_slots,
               const i32* __restrict__ block_expert, const i32* __restrict__ num_blocks,
               const float* __restrict__ topk_weights, u16* __restrict__ y, float* __restrict__ partial,
               i32 M, i32 topk, i32 H, i32 I) {
  static_assert(Cfg::stage == 2, "stage-two configuration expected");
  // Before h: stage one writes it. The gemv main loop waits later, once its first k-tile's
  // weights are in flight (they depend on no kernel): every CTA of stage one called
  // allow_next_kernel_start() after its own wait on the sort before this grid could start, so
  // the sort's outputs (num_blocks, the block's slots and expert) are complete by then.
  if constexpr (!Cfg::gemv) wait_for_previous_kernel();
  // The grid's row: a sorted block, or with sort_halves half of one (its rows are then
  // sorted_slots[blk * block_m ...], the same flat index, and its expert that of block blk / 2).
  int const blk = grid_sorted_block<Cfg>();
  int const sorted = Cfg::sort_halves ? blk >> 1 : blk;
  if (sorted >= num_blocks[0]) {
    // Every CTA waits (the chain stays transitive: moetune_portability.h); the other main loops
    // did above.
    if constexpr (Cfg::gemv) wait_for_previous_kernel();
    return;
  }
  int const n0 = grid_column0<Cfg>();
  int const expert = block_expert[sorted];
  int const n_slots = M * topk;

  u8* smem = moetune_smem;
  i32* row_slot = load_block_rows<Cfg>(smem, sorted_slots, blk, n_slots, 1);
  // A block's slots come first and its padding after them (moe_sort.cuh), so a half whose
  // first row is padding is padding throughout: nothing to multiply or add. (After the rows'
  // barrier: every thread reads the same row_slot[0] and leaves together.)
  if (Cfg::sort_halves && row_slot[0] < 0) {
    if constexpr (Cfg::gemv) wait_for_previous_kernel();
    return;
  }
  int const tid = static_cast<int>(thread_x());

  // Split-K: whole block_k tiles per split.
  int const k_tiles = (I + Cfg::block_k - 1) / Cfg::block_k;
  int const per_split = (k_tiles + Cfg::ksplit - 1) / Cfg::ksplit;
  int const kz = Cfg::ksplit > 1 ? static_cast<int>(block_z()) : 0;
  int const k_begin = kz * per_split * Cfg::block_k;
  int k_end = k_begin + per_split * Cfg::block_k;
  k_end = k_end < I ? k_end : I;
  if (k_begin >= k_end) {  // uniform per CTA: no barrier is skipped by part of it
    if constexpr (Cfg::gemv) wait_for_previous_kernel();
    return;
  }

  u64 const w_elems = static_cast<u64>(H) * static_cast<u64>(I);
  GemmArgs g;
  g.a = h;
  g.a_scales = h_scales;
  g.w = w2 + static_cast<u64>(expert) * (Cfg::w_bf16 ? w_elems * 2 : w_elems / 2);
  g.w_scales = Cfg::w_bf16 ? w2_scales : w2_scales + static_cast<u64>(expert) * (w_elems / 32);
  g.row_src = row_slot;
  g.K = I;
  g.n0 = n0;
  g.I = I;
  g.n_rows = H;
  g.k_begin = k_begin;
  g.k_end = k_end;
  if constexpr (Cfg::swap_ab) swap_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::wgmma) wgmma_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::gemv) gemv_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::staged_fd) staged_fd_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::staged) staged_gemm_tile<Cfg>(g, smem);
  else gemm_tile<Cfg>(g, smem);
  allow_next_kernel_start();  // the epilogue is left (moetune_portability.h)

  // Four columns per item. reduce: a plain 16-byte store of the slot's row. atomic: one vector
  // reduction into the token's row (atomic_add_f32x4: one 16-byte L2 atomic on sm_90 instead
  // of four). Rows start 16-byte aligned: H is a multiple of 32 (moe_shape.cpp), block_n and
  // c_stride multiples of 4.
  static_assert(Cfg::block_n % 4 == 0 && Cfg::c_stride % 4 == 0, "16-byte epilogue items");
  const float* ct = reinterpret_cast<const float*>(smem);
  constexpr int items = Cfg::block_m * (Cfg::block_n / 4);
  for (int it = tid; it < items; it += Cfg::threads) {
    int const r = it / (Cfg::block_n / 4);
    int const c = (it % (Cfg::block_n / 4)) * 4;
    int const s = row_slot[r];
    if (s < 0 || n0 + c >= H) continue;
    // (test_break: TEST ONLY, moe_test_break.cuh; always false in production units)
    float const wgt = Cfg::doweight_stage1 || test_break == test_break_skip_routing_weight
                          ? 1.0f
                          : topk_weights[s];
    const float* src = ct + r * Cfg::c_stride + c;
    float const v0 = src[0] * wgt, v1 = src[1] * wgt, v2 = src[2] * wgt, v3 = src[3] * wgt;
    if constexpr (Cfg::reduce) {
      *reinterpret_cast<u32x4*>(partial + static_cast<u64>(s) * H + n0 + c) =
          u32x4{__builtin_bit_cast(u32, v0), __builtin_bit_cast(u32, v1),
                __builtin_bit_cast(u32, v2), __builtin_bit_cast(u32, v3)};
    } else {
      atomic_add_f32x4(partial + static_cast<u64>(s / topk) * H + n0 + c, v0, v1, v2, v3);
    }
  }
}

}  // namespace moetune

// Explicit instantiation of one stage-two specialization (see MOETUNE_INSTANTIATE_STAGE1).
#define MOETUNE_INSTANTIATE_STAGE2(...)                                                          \
  template __global__ void moetune::moe_stage2<__VA_ARGS__>(                                     \
      const moetune::u8*, const moetune::u8*, const moetune::u8*, const moetune::u8*,            \
      const moetune::i32*, const moetune::i32*, const moetune::i32*, const float*, moetune::u16*, \
      float*, moetune::i32, moetune::i32, moetune::i32, moetune::i32)
