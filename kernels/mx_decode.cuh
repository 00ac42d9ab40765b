#pragma once
// MX element formats: MXFP4 (e2m1) and FP8 (e4m3 OCP "fn", e4m3fnuz) decode to fp32/bf16, and
// the contract's per-1x32 quantisation rule (docs/kernel-contract.md) for A8W4's intermediate.
#include "moetune_portability.h"

namespace moetune {

enum Fp8Flavour : int { fp8_e4m3fn = 0, fp8_e4m3fnuz = 1 };

// fp32 bit pattern of an e2m1 code (0..15). Exact: every e2m1 value is a short fp32.
MOETUNE_DEV u32 e2m1_bits(u32 code) {
  u32 const m = code & 7u;
  u32 const mag = m == 0u ? 0u
                  : m == 1u ? 0x3f000000u  // 0.5 is e2m1's only subnormal
                            : (((m >> 1) + 126u) << 23) | ((m & 1u) << 22);
  return mag | ((code & 8u) << 28);
}

// Two e2m1 codes of one byte times a power-of-two scale, as a bf16x2 word (low = element 2i).
// The product is exact in bf16 (2 significant bits), so truncating to the top half is exact.
MOETUNE_DEV u32 e2m1x2_to_bf16x2(u32 byte, float scale) {
  float const lo = __builtin_bit_cast(float, e2m1_bits(byte & 15u)) * scale;
  float const hi = __builtin_bit_cast(float, e2m1_bits((byte >> 4) & 15u)) * scale;
  return (__builtin_bit_cast(u32, lo) >> 16) | (__builtin_bit_cast(u32, hi) & 0xffff0000u);
}

// Decodes 16 bytes of MXFP4 (32 elements, one scale) into 16 bf16x2 words, in K order.
// The decode runs once per weight element per CTA, so at decode sizes its instruction count
// rivals the memory time (a DeepSeek layer at M=8 decodes ~0.5 G elements). CUDA path: an
// e2m1 code's magnitude bits (e1 e0 m) moved to fp32 bits 24..22 read as exactly
// value * 2^-126 (code 1 = 0.5 becomes the subnormal 2^-127; CUDA keeps fp32 subnormals unless
// asked to flush, and moetune never asks), so one multiply by 2^126 * scale = 2^(s-1) restores
// value * scale exactly: ~3 integer ops + 1 multiply per element instead of the ~10 of the
// select chain below. Scales above 2^1 (s > 128, where 2^(s-1) would overflow) and the NaN
// scale take the general path.
MOETUNE_DEV void decode_mxfp4_16B(const u32x4& raw, u32 scale_byte, u32 (&out)[16]) {
#if defined(MOETUNE_CUDA)
  if (scale_byte <= 128u) {
    float const f = __builtin_bit_cast(float, (scale_byte + 126u) << 23);  // 2^(s-1)
    u32 const w4[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      u32 const w = w4[i];
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        // Byte b holds elements 2b (low nibble) and 2b+1 (high nibble).
        u32 const lo = (((w >> (8 * b)) & 7u) << 22) | (((w >> (8 * b + 3)) & 1u) << 31);
        u32 const hi = (((w >> (8 * b + 4)) & 7u) << 22) | (((w >> (8 * b + 7)) & 1u) << 31);
        float const vlo = __builtin_bit_cast(float, lo) * f;
        float const vhi = __builtin_bit_cast(float, hi) * f;
        // Exact in bf16 (2 significant bits): the top halves are the bf16 values.
        out[i * 4 + b] = (__builtin_bit_cast(u32, vlo) >> 16) | (__builtin_bit_cast(u32, vhi) & 0xffff0000u);
      }
    }
    return;
  }
#endif
  float const s = e8m0_to_f32(scale_byte);
  u32 const w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = e2m1x2_to_bf16x2((w[i] >> (8 * b)) & 0xffu, s);
  }
}

// e4m3 code -> fp32 (exact). fn: bias 7, 0x7f/0xff NaN. fnuz: bias 8, 0x80 NaN.
template <int Flavour>
MOETUNE_DEV float fp8_to_f32(u32 code) {
  u32 const sign = (code & 0x80u) << 24;
  u32 const e = (code >> 3) & 15u;
  u32 const m = code & 7u;
  if (Flavour == fp8_e4m3fnuz) {
    if (code == 0x80u) return __builtin_bit_cast(float, 0x7fc00000u);
    if (e == 0u) return __builtin_bit_cast(float, sign | __builtin_bit_cast(u32, static_cast<float>(m) * 0.0009765625f));
    return __builtin_bit_cast(float, sign | ((e + 119u) << 23) | (m << 20));
  } else {
    if ((code & 0x7fu) == 0x7fu) return __builtin_bit_cast(float, 0x7fc00000u);
    if (e == 0u) return __builtin_bit_cast(float, sign | __builtin_bit_cast(u32, static_cast<float>(m) * 0.001953125f));
    return __builtin_bit_cast(float, sign | ((e + 120u) << 23) | (m << 20));
  }
}

template <int Flavour>
MOETUNE_DEV constexpr float fp8_max() { return Flavour == fp8_e4m3fnuz ? 240.0f : 448.0f; }

// Four fp8 codes (one u32) times a scale -> two bf16x2 words. Exact (4 significant bits).
template <int Flavour>
MOETUNE_DEV void fp8x4_to_bf16x4(u32 codes, float scale, u32& lo, u32& hi) {
  float v[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = fp8_to_f32<Flavour>((codes >> (8 * i)) & 0xffu) * scale;
  lo = (__builtin_bit_cast(u32, v[0]) >> 16) | (__builtin_bit_cast(u32, v[1]) & 0xffff0000u);
  hi = (__builtin_bit_cast(u32, v[2]) >> 16) | (__builtin_bit_cast(u32, v[3]) & 0xffff0000u);
}

#if defined(MOETUNE_SM80_PLUS)
// a * b per bf16 half (fma.rn.bf16x2 with -0 added, so -0 products stay -0). The MXFP4
// decodes build bf16 bit patterns that read as value * 2^-126 (code 1, 0.5, becomes the bf16
// subnormal 2^-127, which this multiply keeps: the verify gates check every code against the
// fp32 reference on the H200) and multiply by 2^(s-1), exactly (2 significant bits).
MOETUNE_DEV u32 mul_bf16x2(u32 a, u32 b) {
  u32 d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0x80008000u));
  return d;
}

// The bf16x2 factor 2^(s-1) (both halves) of the MXFP4 decodes below, for scale bytes 2..128
// (the callers take the exact fp32 path outside that range).
MOETUNE_DEV u32 e2m1_pair_factor(u32 scale_byte) { return ((scale_byte + 126u) << 7) * 0x10001u; }

// Two e2m1 codes at bits 12..15 and 28..31 of u (other bits ignored) times the factor above:
// magnitudes to bf16 bits 6..8 / 22..24 (value * 2^-126), signs already at 15 / 31.
MOETUNE_DEV u32 e2m1x2_at_nibbles_3_7(u32 u, u32 factor) {
  return mul_bf16x2(((u >> 6) & 0x01c001c0u) | (u & 0x80008000u), factor);
}
#endif

// ---- The repacked MXFP4 layout (autotune/moe/mxfp4_repack.hpp, name token `_rp`) --------
// Prepared once at load time: each 32-bit word holds the same 8 elements e0..e7 as in the
// natural layout, their bits placed (table in mxfp4_repack.hpp) so that the natural pairs
// (e0,e1) (e2,e3) come out of one mask of the word and of the word << 3, (e4,e5) of w << 6,
// and (e6,e7) of w << 1 (signs), w >> 3 (e1 e0) and w >> 7 (m): ~3.75 instructions per pair
// with the scale multiply, where the natural layout needs ~5.

// The 4-bit code of element j (0..7) of a repacked word (the exact fallback path).
MOETUNE_DEV u32 e2m1_repacked_code(u32 w, int j) {
  int const p = j >> 1, hi = (j & 1) * 16;
  int const sign = (p == 0 ? 15 : p == 1 ? 12 : p == 2 ? 9 : 14) + hi;
  int const e1 = (p == 0 ? 8 : p == 1 ? 5 : p == 2 ? 2 : 11) + hi;
  int const e0 = (p == 0 ? 7 : p == 1 ? 4 : p == 2 ? 1 : 10) + hi;
  int const m = (p == 0 ? 6 : p == 1 ? 3 : p == 2 ? 0 : 13) + hi;
  return (((w >> sign) & 1u) << 3) | (((w >> e1) & 1u) << 2) | (((w >> e0) & 1u) << 1) | ((w >> m) & 1u);
}

// Pair p (0..3) of a repacked word times the scale s, through fp32 (exact for every scale):
// the path for scale bytes outside the fast decodes' range and for non-CUDA targets.
MOETUNE_DEV u32 e2m1x2_repacked_exact(u32 w, int p, float s) {
  return e2m1x2_to_bf16x2(e2m1_repacked_code(w, 2 * p) | (e2m1_repacked_code(w, 2 * p + 1) << 4), s);
}

#if defined(MOETUNE_SM80_PLUS)
// Pair p (0..3) of a repacked word as bf16 patterns reading value * 2^-126 (mul_bf16x2 by
// e2m1_pair_factor restores value * scale, exactly).
MOETUNE_DEV u32 e2m1x2_repacked_pattern(u32 w, int p) {
  constexpr u32 mask = 0x81c081c0u;  // sign 15/31, magnitude 8..6 / 24..22
  return p == 0 ? (w & mask)
       : p == 1 ? ((w << 3) & mask)
       : p == 2 ? ((w << 6) & mask)
                : ((w << 1) & 0x80008000u) | ((w >> 3) & 0x01800180u) | ((w >> 7) & 0x00400040u);
}

// Pair p (0..3) of a wgmma word (autotune/moe/mxfp4_repack.hpp, the wgmma tiles' A16W4 words)
// as the same patterns: pair 0 a mask, pair 1 a rotation and a mask, pair 2 a shift and a
// mask, pair 3 two shifts, two masks (9 instructions per word; the repacked layout's 11).
MOETUNE_DEV u32 e2m1x2_wgmma_pattern(u32 w, int p) {
  constexpr u32 mask = 0x81c081c0u;
  return p == 0 ? (w & mask)
       : p == 1 ? (__funnelshift_l(w, w, 10) & mask)
       : p == 2 ? ((w << 4) & mask)
                : ((w << 6) & 0x80c080c0u) | ((w >> 2) & 0x01000100u);
}
#endif

// 16 bytes of repacked MXFP4 (32 elements, one scale) -> 16 bf16x2 words in natural pair
// order: word 4i+p holds elements (8i+2p, 8i+2p+1). Scales outside 2..128 (and every non-CUDA
// target) take the exact fp32 path, as the natural decodes do.
MOETUNE_DEV void decode_mxfp4_repacked(const u32x4& raw, u32 scale_byte, u32 (&out)[16]) {
  u32 const w4[4] = {raw.x, raw.y, raw.z, raw.w};
#if defined(MOETUNE_SM80_PLUS)
  if (scale_byte >= 2u && scale_byte <= 128u) {
    u32 const f = e2m1_pair_factor(scale_byte);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int p = 0; p < 4; ++p) out[4 * i + p] = mul_bf16x2(e2m1x2_repacked_pattern(w4[i], p), f);
    return;
  }
#endif
  float const s = e8m0_to_f32(scale_byte);
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int p = 0; p < 4; ++p) out[4 * i + p] = e2m1x2_repacked_exact(w4[i], p, s);
}

// Eight natural MXFP4 codes (one word: element e in nibble e) as e4m3 codes reading exactly
// value * 2^-6: an e2m1 code's magnitude bits (e1 e0 m) at e4m3 bits 4..2 make the exponent
// field e1e0 and the mantissa m00, i.e. 2^(e-7)(1 + m/2) for normals and m * 2^-7 for the
// subnormal 0.5, both 2^-6 times the e2m1 value; the sign moves to bit 7. `even` gets elements
// 0 2 4 6 (bytes 0..3), `odd` elements 1 3 5 7: four and three instructions, no range test.
MOETUNE_DEV void e2m1x8_to_e4m3_scaled(u32 w, u32& even, u32& odd) {
  even = ((w << 2) & 0x1c1c1c1cu) | ((w << 4) & 0x80808080u);
  odd = ((w >> 2) & 0x1c1c1c1cu) | (w & 0x80808080u);
}

// The contract's scale rule: smallest e with amax / 2^e <= emax, clamped to [-127, 127];
// amax == 0 gives e = 0 (byte 127). Computed on exponents, so no division rounding can move
// the result: with e0 = exp(amax) - exp(emax), amax/2^e0 lies in [2^exp(emax), 2^(exp(emax)+1))
// and only e0 or e0 + 1 can be the answer.
template <int Flavour>
MOETUNE_DEV int mx_scale_exponent(float amax) {
  if (!(amax > 0.0f)) return 0;
  int const emax_exp = Flavour == fp8_e4m3fnuz ? 7 : 8;  // 240 = 1.875*2^7, 448 = 1.75*2^8
  int const a_exp = static_cast<int>((__builtin_bit_cast(u32, amax) >> 23) & 0xffu) - 127;
  int e = a_exp - emax_exp;
  if (e < -127) return -127;
  // amax * 2^-e, exact: 2^-e is a normal float for e in [-127, 120].
  float const scaled = amax * __builtin_bit_cast(float, static_cast<u32>(127 - e) << 23);
  if (scaled > fp8_max<Flavour>()) e += 1;
  return e > 127 ? 127 : e;
}

// Rounds v (already divided by the block scale, |v| <= emax) to the nearest e4m3 code, ties to
// even, saturating at +-emax. fn keeps the sign of a zero result; fnuz has no negative zero.
template <int Flavour>
MOETUNE_DEV u32 f32_to_fp8(float v) {
  u32 const bits = __builtin_bit_cast(u32, v);
  u32 const sign = (bits >> 24) & 0x80u;
  float a = fabs_f32(v);
  if (!(a == a)) return Flavour == fp8_e4m3fnuz ? 0x80u : 0x7fu;
  a = a > fp8_max<Flavour>() ? fp8_max<Flavour>() : a;
  int const bias = Flavour == fp8_e4m3fnuz ? 8 : 7;
  float const min_normal = Flavour == fp8_e4m3fnuz ? 0.0078125f : 0.015625f;
  u32 code;
  if (a < min_normal) {
    // Subnormal step 2^(1-bias-3); rint is round-half-even. A result of 8 is the smallest
    // normal, whose code is also 8, so the code is the rounded count itself.
    float const step_inv = Flavour == fp8_e4m3fnuz ? 1024.0f : 512.0f;
    code = static_cast<u32>(rint_f32(a * step_inv));
  } else {
    u32 ab = __builtin_bit_cast(u32, a);
    ab += 0x7ffffu + ((ab >> 20) & 1u);  // round 23-bit mantissa to 3 bits, ties to even
    ab &= 0xfff00000u;
    int const e = static_cast<int>(ab >> 23) - 127 + bias;
    code = (static_cast<u32>(e) << 3) | ((ab >> 20) & 7u);
  }
  if (Flavour == fp8_e4m3fnuz && code == 0u) return 0u;
  return code | sign;
}

}  // namespace moetune
