#pragma once
// The compile-time configuration of one stage-one or stage-two kernel: every search knob is a
// template parameter, everything else is derived here. The host mirrors these derivations and
// the static_asserts as readable validity rules (autotune/search/validity.cpp); keep the two
// in step.
#include "moetune_portability.h"
#include "mma_paths.cuh"
#include "mx_decode.cuh"

namespace moetune {

enum DtypePath : int {
  dtype_a16w4 = 0,  // bf16 activations, MXFP4 weights, bf16 intermediate
  dtype_a8w4 = 1,   // MXFP8 activations, MXFP4 weights, MXFP8 intermediate
  dtype_bf16 = 2,   // bf16 activations and weights
};

template <int Stage_, int Dtype_, int BM_, int BN_, int BK_, int Warps_, int KPack_, int Path_,
          int Waves_, int Stages_, int KSplit_, int GateSeparated_, int DoWeight_, int Fp8_,
          int Reduce_>
struct MoeConfig {
  static constexpr int stage = Stage_;
  static constexpr int dtype = Dtype_;
  static constexpr int block_m = BM_;
  static constexpr int block_n = BN_;  // stage 1: columns of h (2*BN rows of w1); stage 2: of y
  static constexpr int block_k = BK_;
  static constexpr int warps = Warps_;
  static constexpr int kpack = KPack_;
  static constexpr int path = Path_;
  static constexpr int waves = Waves_;
  static constexpr int stages = Stages_;
  static constexpr int ksplit = KSplit_ < 1 ? 1 : KSplit_;
  static constexpr bool gate_separated = GateSeparated_ != 0;
  static constexpr bool doweight_stage1 = DoWeight_ != 0;
  static constexpr int fp8 = Fp8_;
  static constexpr bool reduce = Reduce_ != 0;

  using mma = MmaTraits<Path_>;
  static constexpr int threads = warps * warp_size;
  static constexpr int nv = stage == 1 ? 2 * block_n : block_n;  // weight rows per CTA
  static constexpr int warps_m = block_m > 64 ? block_m / 64 : 1;
  static constexpr int warps_n = warps / warps_m;
  static constexpr int warp_rows = block_m / warps_m;
  static constexpr int mt = warp_rows / mma::MH;              // m fragments per warp
  static constexpr int nt = nv / (mma::FW * warps_n);         // n fragments per warp
  static constexpr int run = 32 * kpack;                      // K elements a lane owns
  static constexpr int chunk = run * mma::LPR;                // K per fragment load
  static constexpr int steps = run / 4;                       // MMA steps per chunk
  static constexpr int chunks = block_k / chunk;              // chunks per k-tile
  static constexpr bool w_bf16 = dtype == dtype_bf16;
  static constexpr bool a_fp8 = dtype == dtype_a8w4;
  static constexpr bool a_raw_fp8 = mma::scaled;              // A kept as fp8 in LDS

  // A tile in LDS: bf16 rows padded by 16 B (bank spread), or fp8 rows + scale bytes.
  static constexpr int a_row_bytes = a_raw_fp8 ? block_k + 16 : 2 * block_k + 16;
  static constexpr int a_bytes = block_m * a_row_bytes + (a_raw_fp8 ? block_m * (block_k / 32) : 0);
  static constexpr int c_stride = nv + 4;  // fp32 epilogue tile, floats per row
  static constexpr int c_bytes = block_m * c_stride * 4;
  static constexpr int row_bytes = block_m * 4;  // slot of each tile row
  static constexpr int smem_bytes = (a_bytes > c_bytes ? a_bytes : c_bytes) + row_bytes;

  // Global->register A loads: 16-byte vectors; fp8 vectors hold 16 elements, bf16 hold 8.
  static constexpr int a_vec_elems = a_fp8 ? 16 : 8;
  static constexpr int a_vecs = block_m * (block_k / a_vec_elems);
  static constexpr int a_vecs_per_thread = (a_vecs + threads - 1) / threads;
  static constexpr int a_scales = a_raw_fp8 ? block_m * (block_k / 32) : 0;
  static constexpr int a_scales_per_thread = (a_scales + threads - 1) / threads;

  static_assert(stage == 1 || stage == 2, "stage is 1 or 2");
  static_assert(block_k % 32 == 0, "block_k must be a multiple of 32 (MX scale granularity)");
  static_assert(block_n % 32 == 0, "block_n must be a multiple of 32");
  static_assert(block_m % 16 == 0, "block_m must be a multiple of 16");
  static_assert(block_m <= 64 || block_m % 64 == 0, "block_m above 64 must be a multiple of 64");
  static_assert(warps % warps_m == 0, "warps must be a multiple of block_m/64");
  static_assert(warp_rows % mma::MH == 0, "rows per warp must be a multiple of the MMA M");
  static_assert(nv % (mma::FW * warps_n) == 0, "weight rows per CTA must split over the warps");
  static_assert(block_k % chunk == 0, "block_k must be a multiple of 32*kpack*lanes-per-row");
  static_assert(!mma::scaled || (kpack == 1 && dtype == dtype_a8w4),
                "scaled MFMA: a8w4 with kpack 1 only");
  static_assert(stages >= 1 && stages <= 3, "stages is 1, 2 or 3");
  static_assert(stage == 2 || ksplit == 1, "split-K is a stage-two knob");
  static_assert(ksplit == 1 || !reduce, "split-K needs the atomic stage two");
  static_assert(mt * nt * mma::ACC <= 128, "accumulator tile too large for registers");
};

// silu(g) * u, in fp32.
MOETUNE_DEV float silu_mul(float g, float u) { return g / (1.0f + exp_f32(-g)) * u; }

}  // namespace moetune
