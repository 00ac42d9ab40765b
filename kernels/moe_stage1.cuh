#pragma once
// Stage one: h[slot] = silu(x[slot/topk] · gate^T) * (x[slot/topk] · up^T) [* w_slot], per
// sorted block of block_m slots (one expert), block_n columns of h per CTA.
// Grid: (max sorted blocks, ceil(I / block_n)[, ksplit]); CTAs past num_blocks exit at once.
// Split-K (ksplit > 1, the wgmma main loop on sm_90): the ksplit CTAs of a column tile are one
// thread-block cluster, each multiplies its share of the k-tiles into its own LDS, and the
// epilogue adds the ksplit partial tiles through distributed shared memory
// (kernels/cluster_sm90.cuh), each CTA its share of the items: few tokens (M = 1: 120 CTAs of
// 4 warps on the backbone, one warp per scheduler) get ksplit times the warps to decode with.
// With an atomic stage two, stage one also clears its fp32 accumulator acc[M][H] (acc_n16
// 16-byte words, every CTA of the grid its share, before any exit): one kernel fewer on the
// MoE's critical path (it was moe_zero_y), and at many tokens the stores overlap stage one's
// MMAs. Stage one never reads acc, and the previous MoE's last reader of it has finished
// (wait_for_previous_kernel). acc_n16 = 0: nothing to clear (a reduce stage two).
// Output: bf16 h [M*topk][I] (a16w4, bf16) or e4m3 codes [M*topk][I] + e8m0 [M*topk][I/32]
// quantised per 1x32 by the contract's rule (a8w4), or, with Cfg::h_bf16 (`_hb`), those
// quantised values as bf16 [M*topk][I] for a stage two compiled as A16W4's. Padding slots are
// never read or written. An A8W4 stage one reading x in bf16 (Cfg::x_bf16, `_xb`) is compiled
// as A16W4's with the A8W4 epilogue (Cfg::h_mx); its x is moe_upcast_x.cuh's xb.
#include "cluster_sm90.cuh"
#include "moe_gemm.cuh"
#include "moe_gemv_gemm.cuh"
#include "moe_staged_gemm.cuh"
#include "moe_swap_gemm.cuh"
#include "moe_wgmma_gemm.cuh"
#include "moe_test_break.cuh"

namespace moetune {

extern __shared__ __attribute__((aligned(16))) u8 moetune_smem[];

// The routing weight stage one multiplies h by: the slot's with doweight_stage1, else 1.
// (test_break: TEST ONLY, moe_test_break.cuh; always false in production units.)
template <class Cfg>
MOETUNE_DEV float weight_in_stage1(const float* __restrict__ topk_weights, int slot) {
  return Cfg::doweight_stage1 && test_break != test_break_skip_routing_weight ? topk_weights[slot]
                                                                               : 1.0f;
}

// Four consecutive fp32 of this CTA's C tile (16-byte aligned; the ksplit 1 epilogue's reader;
// a split-K cluster reads the sum over its ranks' tiles instead: ClusterTileSum).
struct OwnCTile {
  const float* ct;
  MOETUNE_DEV f32x4 sum4(int i) const { return *reinterpret_cast<const f32x4*>(ct + i); }
};

// The epilogue: items first, first + step, ... of the C tile (block_m rows, gate and up
// interleaved per h column) -> h. `tile` reads the C tile (OwnCTile or ClusterTileSum).
template <class Cfg, class Tile>
MOETUNE_DEV void stage1_epilogue(const Tile& tile, int first, int step, const i32* __restrict__ sorted_slots, int blk,
                                 int n_slots, int n0, i32 I, const float* __restrict__ topk_weights,
                                 u8* __restrict__ h, u8* __restrict__ h_scales) {
  if constexpr (!Cfg::h_mx) {
    (void)h_scales;
    // 8 columns (one 16-byte store) per item.
    constexpr int items = Cfg::block_m * (Cfg::block_n / 8);
    for (int it = first; it < items; it += step) {
      int const r = it / (Cfg::block_n / 8);
      int const c = (it % (Cfg::block_n / 8)) * 8;
      int const s = sorted_slots[blk * Cfg::block_m + r];
      if (s < 0 || s >= n_slots || n0 + c >= I) continue;
      float const wgt = weight_in_stage1<Cfg>(topk_weights, s);
      u32 o[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        // h columns c + 2q and c + 2q + 1: their (gate, up) pairs
        f32x4 const gu = tile.sum4(r * Cfg::c_stride + 2 * (c + 2 * q));
        o[q] = pack_bf16x2(silu_mul(gu.x, gu.y) * wgt, silu_mul(gu.z, gu.w) * wgt);
      }
      *reinterpret_cast<u32x4*>(h + (static_cast<u64>(s) * I + n0 + c) * 2) = u32x4{o[0], o[1], o[2], o[3]};
    }
  } else {
    // Each MX block (32 columns) is four items of 8 columns, taken by four aligned lanes (first
    // and step keep a lane's item index = its lane mod 4, so a block's four items run in the
    // same iteration on one group): each its 8 values, the block's amax by two exchanges, each
    // its own codes. One thread per block left 7 in 8 idle at 8-row tiles, with 32 SiLUs and
    // conversions in a row on the epilogue's critical path.
    constexpr int items = Cfg::block_m * (Cfg::block_n / 8);
    static_assert(Cfg::threads % 4 == 0, "a block's four lanes are aligned");
    for (int it = first; it < items; it += step) {
      int const r = it / (Cfg::block_n / 8);
      int const c = (it % (Cfg::block_n / 8)) * 8;  // this lane's 8 columns of block c & ~31
      int const s = sorted_slots[blk * Cfg::block_m + r];
      // The block's four lanes share r and the block, so they skip or go on together.
      if (s < 0 || s >= n_slots || n0 + (c & ~31) >= I) continue;
      float const wgt = weight_in_stage1<Cfg>(topk_weights, s);
      float v[8];
      float amax = 0.0f;
#pragma unroll
      for (int i = 0; i < 8; i += 2) {
        f32x4 const gu = tile.sum4(r * Cfg::c_stride + 2 * (c + i));
        v[i] = silu_mul(gu.x, gu.y) * wgt;
        v[i + 1] = silu_mul(gu.z, gu.w) * wgt;
        amax = fmax_f32(amax, fmax_f32(fabs_f32(v[i]), fabs_f32(v[i + 1])));
      }
      amax = fmax_f32(amax, shfl_xor_in_group<4>(amax, 1));
      amax = fmax_f32(amax, shfl_xor_in_group<4>(amax, 2));
      int const e = mx_scale_exponent<Cfg::fp8>(amax);
      float const inv = __builtin_bit_cast(float, static_cast<u32>(127 - e) << 23);  // 2^-e
      if constexpr (Cfg::h_bf16) {
        // h kept in bf16: the same codes, stored as their values code x 2^e (exact in bf16 down
        // to e = -117; 2^e itself is an fp32 subnormal below e = -126).
        float const scale = e >= -126 ? __builtin_bit_cast(float, static_cast<u32>(e + 127) << 23)
                                      : __builtin_bit_cast(float, 0x00400000u >> (-126 - e));
        u32 pairs[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          float const lo = fp8_to_f32<Cfg::fp8>(f32_to_fp8<Cfg::fp8>(v[2 * q] * inv)) * scale;
          float const hi = fp8_to_f32<Cfg::fp8>(f32_to_fp8<Cfg::fp8>(v[2 * q + 1] * inv)) * scale;
          pairs[q] = amax > 0.0f ? pack_bf16x2(lo, hi) : 0u;  // an all-zero block is all zeros
        }
        *reinterpret_cast<u32x4*>(h + (static_cast<u64>(s) * I + n0 + c) * 2) =
            u32x4{pairs[0], pairs[1], pairs[2], pairs[3]};
        continue;
      }
      u32 words[2];
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        u32 w = 0;
#pragma unroll
        for (int b = 0; b < 4; ++b) w |= f32_to_fp8<Cfg::fp8>(v[4 * q + b] * inv) << (8 * b);
        words[q] = amax > 0.0f ? w : 0u;  // the contract: an all-zero block is all code 0
      }
      *reinterpret_cast<u32x2*>(h + static_cast<u64>(s) * I + n0 + c) = u32x2{words[0], words[1]};
      if ((c & 31) == 0) h_scales[static_cast<u64>(s) * (I / 32) + (n0 + c) / 32] = static_cast<u8>(e + 127);
    }
  }
}

// The kernel's body, shared by its two entry points (moe_stage1, moe_stage1_ksplit).
template <class Cfg>
MOETUNE_DEV void stage1_body(const u8* __restrict__ x, const u8* __restrict__ x_scales, const u8* __restrict__ w1,
                             const u8* __restrict__ w1_scales, const i32* __restrict__ sorted_slots,
                             const i32* __restrict__ block_expert, const i32* __restrict__ num_blocks,
                             const float* __restrict__ topk_weights, u8* __restrict__ h, u8* __restrict__ h_scales,
                             i32 M, i32 topk, i32 H, i32 I, u32x4* __restrict__ acc, i64 acc_n16, i32 grid_x,
                             i32 ctas) {
  static_assert(Cfg::stage == 1, "stage-one configuration expected");
  wait_for_previous_kernel();  // before num_blocks: the sort writes it
  if (acc_n16 > 0) {
    // The CTA's linear index over the whole grid (z: the split-K ranks, grid.y = ctas /
    // (grid.x * ksplit)); unsplit kernels have no z and keep the division out of their code.
    i64 const cta = Cfg::ksplit > 1 ? (static_cast<i64>(block_z()) * (ctas / (grid_x * Cfg::ksplit)) + block_y()) * grid_x +
                                          block_x()
                                    : static_cast<i64>(block_y()) * grid_x + block_x();
    for (i64 i = cta * Cfg::threads + thread_x(); i < acc_n16; i += static_cast<i64>(ctas) * Cfg::threads)
      acc[i] = u32x4{0, 0, 0, 0};
  }
  int const blk = grid_sorted_block<Cfg>();
  if (blk >= num_blocks[0]) return;
  int const n0 = grid_column0<Cfg>();
  int const expert = block_expert[blk];
  int const n_slots = M * topk;

  u8* smem = moetune_smem;
  // The GEMM gathers token rows; the epilogue re-reads each row's slot from sorted_slots
  // (cheap, cached).
  i32* row_tok = load_block_rows<Cfg>(smem, sorted_slots, blk, n_slots, topk);
  int const tid = static_cast<int>(thread_x());

  u64 const w_rows = 2ull * static_cast<u64>(I);
  u64 const w_elems = w_rows * static_cast<u64>(H);
  GemmArgs g;
  g.a = x;
  g.a_scales = x_scales;
  g.w = w1 + static_cast<u64>(expert) * (Cfg::w_bf16 ? w_elems * 2 : w_elems / 2);
  g.w_scales = Cfg::w_bf16 ? w1_scales : w1_scales + static_cast<u64>(expert) * (w_elems / 32);
  g.row_src = row_tok;
  g.K = H;
  g.n0 = n0;
  g.I = I;
  g.n_rows = 0;
  g.k_begin = 0;
  g.k_end = H;
  if constexpr (Cfg::ksplit > 1) {
    // Split-K: rank z takes k-tiles [z * tiles / ksplit, (z + 1) * tiles / ksplit), at least one
    // each (the rules ask for as many k-tiles as ranks), so every rank reaches both cluster
    // barriers below.
    int const tiles = (H + Cfg::block_k - 1) / Cfg::block_k;
    int const z = static_cast<int>(block_z());
    g.k_begin = z * tiles / Cfg::ksplit * Cfg::block_k;
    int const end = (z + 1) * tiles / Cfg::ksplit * Cfg::block_k;
    g.k_end = end < H ? end : H;
  }
  if constexpr (Cfg::swap_ab) swap_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::wgmma) wgmma_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::gemv) gemv_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::staged_fd) staged_fd_gemm_tile<Cfg>(g, smem);
  else if constexpr (Cfg::staged) staged_gemm_tile<Cfg>(g, smem);
  else gemm_tile<Cfg>(g, smem);
  allow_next_kernel_start();  // the epilogue is left (moetune_portability.h)

  const float* ct = reinterpret_cast<const float*>(smem);
  if constexpr (Cfg::ksplit > 1) {
    // Split-K: this CTA holds its K range's partial sums; the epilogue needs whole ones.
    cluster_barrier();  // every rank's C tile is written and visible to the cluster
    ClusterTileSum<Cfg::ksplit> const tile(ct);
    stage1_epilogue<Cfg>(tile, tid + static_cast<int>(block_z()) * Cfg::threads, Cfg::threads * Cfg::ksplit,
                         sorted_slots, blk, n_slots, n0, I, topk_weights, h, h_scales);
    cluster_barrier();  // no rank exits (its LDS goes) while another still reads its tile
  } else {
    stage1_epilogue<Cfg>(OwnCTile{ct}, tid, Cfg::threads, sorted_slots, blk, n_slots, n0, I, topk_weights, h,
                         h_scales);
  }
}

#define MOETUNE_STAGE1_PARAMS                                                                                  \
  const u8 *__restrict__ x, const u8 *__restrict__ x_scales, const u8 *__restrict__ w1,                        \
      const u8 *__restrict__ w1_scales, const i32 *__restrict__ sorted_slots, const i32 *__restrict__ block_expert, \
      const i32 *__restrict__ num_blocks, const float *__restrict__ topk_weights, u8 *__restrict__ h,           \
      u8 *__restrict__ h_scales, i32 M, i32 topk, i32 H, i32 I, u32x4 *__restrict__ acc, i64 acc_n16, i32 grid_x, \
      i32 ctas
#define MOETUNE_STAGE1_ARGS \
  x, x_scales, w1, w1_scales, sorted_slots, block_expert, num_blocks, topk_weights, h, h_scales, M, topk, H, I, acc, acc_n16, grid_x, ctas

// Grid (max sorted blocks, ceil(I / block_n)).
template <class Cfg>
__global__ void MOETUNE_LAUNCH_BOUNDS(Cfg::threads, Cfg::launch_min_blocks) moe_stage1(MOETUNE_STAGE1_PARAMS) {
  static_assert(Cfg::ksplit == 1, "split-K stage one is moe_stage1_ksplit");
  stage1_body<Cfg>(MOETUNE_STAGE1_ARGS);
}

// Split-K (sm_90): grid (max sorted blocks, ceil(I / block_n), ksplit), each column tile's
// ksplit CTAs one cluster along z.
template <class Cfg>
__global__ void MOETUNE_LAUNCH_BOUNDS(Cfg::threads, Cfg::launch_min_blocks)
    MOETUNE_CLUSTER_DIMS(1, 1, Cfg::ksplit) moe_stage1_ksplit(MOETUNE_STAGE1_PARAMS) {
  static_assert(Cfg::ksplit > 1, "moe_stage1_ksplit splits K");
  stage1_body<Cfg>(MOETUNE_STAGE1_ARGS);
}

}  // namespace moetune

// Explicit instantiation of one stage-one specialization (the rendered TU uses this, so the
// parameter list lives in one place). Needed by the offline compilers (hipRTC, clang-22),
// which emit only instantiated kernels; NVRTC also accepts it next to its name expressions.
#define MOETUNE_INSTANTIATE_STAGE1(...) MOETUNE_INSTANTIATE_STAGE1_ENTRY(moe_stage1, __VA_ARGS__)
#define MOETUNE_INSTANTIATE_STAGE1_KSPLIT(...) MOETUNE_INSTANTIATE_STAGE1_ENTRY(moe_stage1_ksplit, __VA_ARGS__)
#define MOETUNE_INSTANTIATE_STAGE1_ENTRY(ENTRY, ...)                                            \
  template __global__ void moetune::ENTRY<__VA_ARGS__>(                                         \
      const moetune::u8*, const moetune::u8*, const moetune::u8*, const moetune::u8*,           \
      const moetune::i32*, const moetune::i32*, const moetune::i32*, const float*, moetune::u8*, \
      moetune::u8*, moetune::i32, moetune::i32, moetune::i32, moetune::i32, moetune::u32x4*,     \
      moetune::i64, moetune::i32, moetune::i32)
