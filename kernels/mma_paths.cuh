#pragma once
// Matrix paths. Every path shares one operand-ownership scheme so that the weight side can be
// loaded straight from global memory in 16-byte pieces and decoded once, in registers:
//
//   a lane owns KPack*32 *consecutive* K elements (whole MX blocks) of one weight row;
//   the MMA's fragment-k indices are mapped onto those physical K positions, and the A side
//   (activations, read from shared memory) uses the same permutation. A dot product does not
//   care in which order K is summed, so the result is the plain GEMM.
//
// Per path: FW = weight rows (output columns) per fragment, LPR = lanes sharing one weight
// row (each owning a different K run), MH = output rows per fragment, ACC = fp32 accumulators
// per lane per fragment. One MMA "step" consumes 4 K elements of every lane's run.
#include "moetune_portability.h"
#include "mma_sm90.cuh"
#include "mma_gfx9.cuh"

namespace moetune {

enum MmaPath : int {
  path_fma = 0,      // plain FMA, any arch
  path_sm80 = 1,     // mma.sync.aligned.m16n8k16 bf16 (sm_80+, used on sm_90)
  path_mfma16 = 2,   // v_mfma_f32_16x16x16bf16_1k (gfx90a, gfx942, gfx950)
  path_mfma32 = 3,   // v_mfma_f32_32x32x8bf16_1k
  path_smfma16 = 4,  // v_mfma_scale_f32_16x16x128_f8f6f4 (gfx950, MXFP8 x MXFP4)
  path_smfma32 = 5,  // v_mfma_scale_f32_32x32x64_f8f6f4
};

template <int Path>
struct MmaTraits;
template <>
struct MmaTraits<path_fma> {
  static constexpr int FW = warp_size, LPR = 1, MH = 1, ACC = 1;
  static constexpr bool scaled = false;
};
template <>
struct MmaTraits<path_sm80> {
  static constexpr int FW = 8, LPR = 4, MH = 16, ACC = 4;
  static constexpr bool scaled = false;
};
template <>
struct MmaTraits<path_mfma16> {
  static constexpr int FW = 16, LPR = 4, MH = 16, ACC = 4;
  static constexpr bool scaled = false;
};
template <>
struct MmaTraits<path_mfma32> {
  static constexpr int FW = 32, LPR = 2, MH = 32, ACC = 16;
  static constexpr bool scaled = false;
};
template <>
struct MmaTraits<path_smfma16> {
  static constexpr int FW = 16, LPR = 4, MH = 16, ACC = 4;
  static constexpr bool scaled = true;
};
template <>
struct MmaTraits<path_smfma32> {
  static constexpr int FW = 32, LPR = 2, MH = 32, ACC = 16;
  static constexpr bool scaled = true;
};

// Which weight row (within the fragment) and which K run a lane owns.
template <int Path>
MOETUNE_DEV int frag_row(int lane) {
  if (Path == path_fma) return lane;
  if (Path == path_sm80) return lane >> 2;
  return lane % MmaTraits<Path>::FW;
}
template <int Path>
MOETUNE_DEV int frag_kgroup(int lane) {
  if (Path == path_fma) return 0;
  if (Path == path_sm80) return lane & 3;
  return lane / MmaTraits<Path>::FW;
}

// Output coordinates (row within the m fragment, column within the n fragment) of
// accumulator i of a lane. These are the instructions' documented D layouts.
template <int Path>
MOETUNE_DEV void acc_coord(int lane, int i, int& row, int& col) {
  if (Path == path_fma) {
    row = 0;
    col = lane;
  } else if (Path == path_sm80) {
    row = (lane >> 2) + 8 * (i >> 1);
    col = 2 * (lane & 3) + (i & 1);
  } else if (MmaTraits<Path>::FW == 16) {
    row = 4 * (lane >> 4) + i;
    col = lane & 15;
  } else {
    row = 8 * (i >> 2) + 4 * (lane >> 5) + (i & 3);
    col = lane & 31;
  }
}

// Rows of the A fragment a lane supplies (sm80: two rows, g and g+8; MFMA: one row; FMA: all).
template <int Path>
MOETUNE_DEV int a_row(int lane) {
  if (Path == path_sm80) return lane >> 2;
  if (Path == path_fma) return 0;
  return lane % MmaTraits<Path>::FW;
}

// One bf16 MMA step: acc += A(4 K elements per lane, in a01 = rows' first pair / a23 = second
// pair) x B(b0, b1). For sm80 a_lo/a_hi are the rows g and g+8; MFMA uses a_lo only.
template <int Path>
MOETUNE_DEV void mma_bf16_step(float (&acc)[MmaTraits<Path>::ACC], u32x2 a_lo, u32x2 a_hi, u32 b0,
                               u32 b1) {
  if constexpr (Path == path_sm80) {
    mma_m16n8k16_bf16(acc, a_lo.x, a_hi.x, a_lo.y, a_hi.y, b0, b1);
  } else if constexpr (Path == path_mfma16) {
    mfma_16x16x16_bf16(acc, a_lo, u32x2{b0, b1});
  } else if constexpr (Path == path_mfma32) {
    mfma_32x32x8_bf16(acc, a_lo, u32x2{b0, b1});
  } else {
    (void)acc, (void)a_lo, (void)a_hi, (void)b0, (void)b1;
  }
}

}  // namespace moetune
