#pragma once
// AMD CDNA matrix primitives (MFMA builtins of clang; no HIP header needed).
//   v_mfma_f32_16x16x16bf16_1k : A lane (row lane%16, k 4*(lane/16)..+3), B likewise with
//       col; D lane: rows 4*(lane/16)+i, col lane%16 (i < 4).
//   v_mfma_f32_32x32x8bf16_1k  : A lane (row lane%32, k 4*(lane/32)..+3); D lane: rows
//       8*(i/4) + 4*(lane/32) + i%4, col lane%32 (i < 16).
//   v_mfma_scale_f32_16x16x128_f8f6f4 / 32x32x64 (gfx950): a lane holds 32 consecutive K of
//       one row (row lane%16 / lane%32, K group lane/16 / lane/32) and that block's e8m0
//       scale; FP8 fills the 8-dword operand, FP4 its low 4 dwords. D layout as above.
#include "moetune_portability.h"

namespace moetune {

#if defined(MOETUNE_AMD)
typedef short v4i16 __attribute__((ext_vector_type(4)));
typedef float v4f32 __attribute__((ext_vector_type(4)));
typedef float v16f32 __attribute__((ext_vector_type(16)));
typedef int v8i32 __attribute__((ext_vector_type(8)));
#endif

MOETUNE_DEV void mfma_16x16x16_bf16(float (&d)[4], u32x2 a, u32x2 b) {
#if defined(MOETUNE_GFX9_MFMA_BF16_1K)
  v4f32 c = {d[0], d[1], d[2], d[3]};
  c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(v4i16, a),
                                                __builtin_bit_cast(v4i16, b), c, 0, 0, 0);
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = c[i];
#else
  (void)d, (void)a, (void)b;
  trap_kernel();
#endif
}

MOETUNE_DEV void mfma_32x32x8_bf16(float (&d)[16], u32x2 a, u32x2 b) {
#if defined(MOETUNE_GFX9_MFMA_BF16_1K)
  v16f32 c;
#pragma unroll
  for (int i = 0; i < 16; ++i) c[i] = d[i];
  c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(v4i16, a),
                                               __builtin_bit_cast(v4i16, b), c, 0, 0, 0);
#pragma unroll
  for (int i = 0; i < 16; ++i) d[i] = c[i];
#else
  (void)d, (void)a, (void)b;
  trap_kernel();
#endif
}

// Scaled MFMA, A = FP8 e4m3 (format 0), B = FP4 e2m1 (format 4), per-lane e8m0 scales in the
// low byte of scale_a / scale_b (op_sel 0).
template <int ACC>
MOETUNE_DEV void mfma_scale_f8f4(float (&d)[ACC], const u32 (&a)[8], const u32x4& b, u32 scale_a,
                                 u32 scale_b) {
#if defined(MOETUNE_GFX950)
  v8i32 av, bv;
#pragma unroll
  for (int i = 0; i < 8; ++i) av[i] = static_cast<int>(a[i]);
  bv[0] = static_cast<int>(b.x);
  bv[1] = static_cast<int>(b.y);
  bv[2] = static_cast<int>(b.z);
  bv[3] = static_cast<int>(b.w);
  bv[4] = bv[5] = bv[6] = bv[7] = 0;
  if constexpr (ACC == 4) {
    v4f32 c = {d[0], d[1], d[2], d[3]};
    c = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(av, bv, c, 0, 4, 0,
                                                         static_cast<int>(scale_a), 0,
                                                         static_cast<int>(scale_b));
#pragma unroll
    for (int i = 0; i < 4; ++i) d[i] = c[i];
  } else {
    v16f32 c;
#pragma unroll
    for (int i = 0; i < 16; ++i) c[i] = d[i];
    c = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(av, bv, c, 0, 4, 0,
                                                        static_cast<int>(scale_a), 0,
                                                        static_cast<int>(scale_b));
#pragma unroll
    for (int i = 0; i < 16; ++i) d[i] = c[i];
  }
#else
  (void)d, (void)a, (void)b, (void)scale_a, (void)scale_b;
  trap_kernel();
#endif
}

}  // namespace moetune
