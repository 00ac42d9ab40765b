#pragma once
// The grouped GEMM with swapped operands, for few tokens per expert (decode sizes).
//
// With 1-8 tokens per expert the usual orientation (tokens on the MMA's M side, 16 rows)
// wastes most of every MMA and routes the activations through LDS with two barriers per
// k-tile, and the weight stream, the only thing that costs, waits on both. Here the weights
// are the MMA's M operand (16 weight rows per fragment) and the tokens its N operand (8 on
// mma.sync m16n8k16, 16 on the 16x16 MFMA):
//   * each lane copies its weight rows' 16-byte pieces, their scale words and its token's
//     activations from global memory into its own slots of a ring of `stages` k-tiles in LDS
//     (cp.async: stages-1 tiles in flight per warp, no registers held, no barrier), then
//     decodes each MXFP4 piece once into bf16 pairs and permutes the activations to match;
//   * warps first take 16-row fragments, the remaining warps split the CTA's K range and add
//     their partial tiles in LDS at the end, so even one fragment per CTA keeps several warps
//     of weight loads in flight.
// On return the result is in LDS as fp32 C[block_m][c_stride] (token-major, after a barrier),
// exactly as gemm_tile leaves it, so both stages' epilogues serve both orientations.
//
// K order inside a lane's 32-element run: MMA k-slots may map to any physical K as long as
// both operands use the same map. The decode emits, for each 8 elements e0..e7 of a 32-bit
// weight word, the pairs (e3,e7) (e2,e6) (e1,e5) (e0,e4) (the order that a shift-and-mask
// decode gives for free); activations are permuted to the same pairs with one byte-select
// per output word. Elsewhere (AMD, out-of-range scales) an exact fp32 decode emits the same
// order.
#include "moe_gemm.cuh"

namespace moetune {

// Activations of 8 consecutive K (one 16-byte bf16 vector, natural pairs (0,1) (2,3) (4,5)
// (6,7)) as the pairs (3,7) (2,6) (1,5) (0,4).
// One byte permute per output word (the shift-and-mask form compiled to two instructions for
// half of them).
MOETUNE_DEV u32 select_halves(u32 a, u32 b, u32 selector) {
#if defined(MOETUNE_CUDA)
  u32 d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
#else
  // selector 0x7632: high halves (a.hi, b.hi); 0x5410: low halves (a.lo, b.lo).
  return selector == 0x7632u ? (a >> 16) | (b & 0xffff0000u) : (a & 0xffffu) | (b << 16);
#endif
}
MOETUNE_DEV void permute8_bf16(const u32x4& v, u32* out) {
  out[0] = select_halves(v.y, v.w, 0x7632u);
  out[1] = select_halves(v.y, v.w, 0x5410u);
  out[2] = select_halves(v.x, v.z, 0x7632u);
  out[3] = select_halves(v.x, v.z, 0x5410u);
}

// 16 bytes of MXFP4 (32 elements, one scale) -> 16 bf16x2 words in the swapped pair order:
// word 4w+j holds elements (8w+3-j, 8w+7-j).
MOETUNE_DEV void decode_mxfp4_pairs(const u32x4& raw, u32 scale_byte, u32 (&out)[16]) {
  u32 const w4[4] = {raw.x, raw.y, raw.z, raw.w};
#if defined(MOETUNE_SM80_PLUS)
  if (scale_byte >= 2u && scale_byte <= 128u) {
    u32 const f = e2m1_pair_factor(scale_byte);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      u32 v = w4[w];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        out[4 * w + j] = e2m1x2_at_nibbles_3_7(v, f);  // nibbles 3-j and 7-j of the word
        v <<= 4;
      }
    }
    return;
  }
#endif
  float const s = e8m0_to_f32(scale_byte);
#pragma unroll
  for (int w = 0; w < 4; ++w) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float const lo = __builtin_bit_cast(float, e2m1_bits((w4[w] >> (4 * (3 - j))) & 15u)) * s;
      float const hi = __builtin_bit_cast(float, e2m1_bits((w4[w] >> (4 * (7 - j))) & 15u)) * s;
      out[4 * w + j] = (__builtin_bit_cast(u32, lo) >> 16) | (__builtin_bit_cast(u32, hi) & 0xffff0000u);
    }
  }
}

// 8 fp8 codes (two words, elements 0..3 and 4..7) times the block scale -> the swapped pairs.
template <class Cfg>
MOETUNE_DEV void fp8x8_to_pairs(u32 lo_word, u32 hi_word, float scale, u32* out) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float const a = fp8_to_f32<Cfg::fp8>((lo_word >> (8 * (3 - j))) & 0xffu) * scale;
    float const b = fp8_to_f32<Cfg::fp8>((hi_word >> (8 * (3 - j))) & 0xffu) * scale;
    out[j] = (__builtin_bit_cast(u32, a) >> 16) | (__builtin_bit_cast(u32, b) & 0xffff0000u);
  }
}

// One MMA step (4 K of the lane's run): acc(16 weight rows x tokens) += W x X.
template <class Cfg>
MOETUNE_DEV void swapped_mma_step(float (&acc)[4], const u32 (&w)[Cfg::sw_rpl][16], const u32 (&x)[16], int s) {
  if constexpr (Cfg::path == path_sm80) {
    // A: rows g (a0, a2) and g+8 (a1, a3); B: token g. First pair = word 2s, second = 2s+1.
    mma_m16n8k16_bf16(acc, w[0][2 * s], w[Cfg::sw_rpl - 1][2 * s], w[0][2 * s + 1],
                      w[Cfg::sw_rpl - 1][2 * s + 1], x[2 * s], x[2 * s + 1]);
  } else {
    mfma_16x16x16_bf16(acc, u32x2{w[0][2 * s], w[0][2 * s + 1]}, u32x2{x[2 * s], x[2 * s + 1]});
  }
}

// The weight row (within a 16-row fragment) that lane supplies as its r-th row, and the token
// (within an N fragment) it supplies activations for.
template <class Cfg>
MOETUNE_DEV int swapped_row(int lane, int r) {
  return Cfg::path == path_sm80 ? (lane >> 2) + 8 * r : (lane & 15);
}
template <class Cfg>
MOETUNE_DEV int swapped_token(int lane) {
  return Cfg::path == path_sm80 ? (lane >> 2) : (lane & 15);
}

// ---- The per-lane copy ring ---------------------------------------------------------------
// Every lane copies exactly the 16-byte pieces (and the 4-byte words holding its scale bytes)
// that it will itself consume, into its own slots of a ring of `stages` k-tiles in LDS, with
// asynchronous copies (cp.async on sm_80+). So the only ordering a lane needs is its own
// "my copies up to tile t have landed" (cp.async.wait_group): no barrier, no warp sync, and
// stages-1 whole tiles of weight bytes stay in flight per warp without holding registers.
// Slot v of a lane in a stage: vec region (v * warp_size + lane) * 16, word region likewise * 4.

// One asynchronous copy of Bytes (16: weight pieces and activations, through L2 only; 4: the
// word holding a scale byte) into LDS; ok == false copies nothing and zero-fills.
template <int Bytes>
MOETUNE_DEV void copy_async(u8* dst, const u8* src, bool ok) {
  static_assert(Bytes == 16 || Bytes == 4, "16-byte pieces or 4-byte scale words");
#if defined(MOETUNE_SM80_PLUS)
  u32 const d = static_cast<u32>(__cvta_generic_to_shared(dst));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(ok ? 16 : 0) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src), "r"(ok ? 4 : 0) : "memory");
#else
  // No asynchronous copy here: a plain load and store, same result (never run on AMD yet).
  if constexpr (Bytes == 16)
    *reinterpret_cast<u32x4*>(dst) = ok ? *reinterpret_cast<const u32x4*>(src) : u32x4{0, 0, 0, 0};
  else
    *reinterpret_cast<u32*>(dst) = ok ? *reinterpret_cast<const u32*>(src) : 0u;
#endif
}
// The same with the source size precomputed (16/4 or 0): the full-tile path below resolves
// every row's "copies anything" once per CTA instead of selecting per copy.
template <int Bytes>
MOETUNE_DEV void copy_async_sized(u8* dst, const u8* src, u32 src_bytes) {
#if defined(MOETUNE_SM80_PLUS)
  u32 const d = static_cast<u32>(__cvta_generic_to_shared(dst));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
#else
  copy_async<Bytes>(dst, src, src_bytes != 0u);
#endif
}
MOETUNE_DEV void copy_commit() {
#if defined(MOETUNE_SM80_PLUS)
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int Pending>
MOETUNE_DEV void copy_wait() {
#if defined(MOETUNE_SM80_PLUS)
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
#endif
}

// The 4-byte-aligned word holding a scale byte, and the byte out of it.
MOETUNE_DEV const u8* word_of(const u8* p) {
  return reinterpret_cast<const u8*>(reinterpret_cast<u64>(p) & ~u64{3});
}
MOETUNE_DEV u32 byte_of(u32 word, const u8* p) { return (word >> (8 * (reinterpret_cast<u64>(p) & 3u))) & 0xffu; }

template <class Cfg>
struct SwapRing {
  static constexpr int w_pieces = Cfg::w_bf16 ? 4 : 1;  // 16-byte pieces per 32-K run of a row
  static constexpr int a_pieces = Cfg::a_fp8 ? 2 : 4;   // of a token
  static constexpr int w_vecs = Cfg::chunks * Cfg::sw_nt * Cfg::sw_rpl * w_pieces;
  static constexpr int vecs = w_vecs + Cfg::chunks * Cfg::sw_mt * a_pieces;
  static constexpr int w_words = Cfg::w_bf16 ? 0 : Cfg::chunks * Cfg::sw_nt * Cfg::sw_rpl;
  static constexpr int words = w_words + (Cfg::a_fp8 ? Cfg::chunks * Cfg::sw_mt : 0);
  static constexpr int stage_bytes = warp_size * (vecs * 16 + words * 4);
  static_assert(Cfg::sw_ring_bytes == Cfg::warps * Cfg::stages * stage_bytes, "moe_config.cuh's ring size");

  u8* vec0;   // this lane's slot 0 of stage 0 (vec region)
  u8* word0;  // ... of the word region
  MOETUNE_DEV u8* vec(int stage, int v) const { return vec0 + stage * stage_bytes + v * warp_size * 16; }
  MOETUNE_DEV u8* word(int stage, int w) const { return word0 + stage * stage_bytes + w * warp_size * 4; }
  // Slot numbers inside a stage.
  static MOETUNE_DEV int wv(int c, int j, int r, int p) { return ((c * Cfg::sw_nt + j) * Cfg::sw_rpl + r) * w_pieces + p; }
  static MOETUNE_DEV int av(int c, int i, int p) { return w_vecs + (c * Cfg::sw_mt + i) * a_pieces + p; }
  static MOETUNE_DEV int ww(int c, int j, int r) { return (c * Cfg::sw_nt + j) * Cfg::sw_rpl + r; }
  static MOETUNE_DEV int aw(int c, int i) { return w_words + c * Cfg::sw_mt + i; }
};

// A lane's sources, resolved once per CTA so a k-tile only adds its offset: the first byte of
// each weight row's run for this lane's K group (and its scale byte), the same for each token
// row's activations. Rows past the matrix and padding tokens point at the tensor's start and
// copy nothing (zero fill).
template <class Cfg>
struct SwapSources {
  const u8* w[Cfg::sw_nt][Cfg::sw_rpl];
  const u8* ws[Cfg::sw_nt][Cfg::sw_rpl];
  bool w_ok[Cfg::sw_nt][Cfg::sw_rpl];
  const u8* a[Cfg::sw_mt];
  const u8* as[Cfg::sw_mt];
  bool a_ok[Cfg::sw_mt];
  int k_lane;  // K offset of this lane's run inside a chunk

  // The full-tile copy path (issue_full_swapped_tile): sources that need only "+ the chunk's
  // offset" per copy, no select. Rows that copy nothing (padding tokens, rows past the matrix)
  // point into the tensor's first row at the lane's own K, which stays in bounds for every
  // full tile, and copy 0 bytes. Scale sources are the 4-byte-aligned words: a chunk spans a
  // multiple of 128 K (4 scale bytes), so the byte's place in its word never changes.
  static constexpr bool aligned_scale_words = Cfg::chunk % 128 == 0 && Cfg::block_k % 128 == 0;
  const u8* fw[Cfg::sw_nt][Cfg::sw_rpl];
  const u8* fws[Cfg::sw_nt][Cfg::sw_rpl];
  u32 w_bytes[Cfg::sw_nt][Cfg::sw_rpl];  // 16 or 0
  const u8* fa[Cfg::sw_mt];
  const u8* fas[Cfg::sw_mt];
  u32 a_bytes[Cfg::sw_mt];  // 16 or 0

  // Byte offsets of K position k (a multiple of 32) in a weight row, an activation row and
  // a scale row.
  static MOETUNE_DEV u64 w_off(int k) { return Cfg::w_bf16 ? 2ull * k : k / 2; }
  static MOETUNE_DEV u64 a_off(int k) { return Cfg::a_fp8 ? 1ull * k : 2ull * k; }
  static MOETUNE_DEV u64 s_off(int k) { return k / 32; }

  MOETUNE_DEV SwapSources(const GemmArgs& g, const int (&wrow)[Cfg::sw_nt][Cfg::sw_rpl],
                          const int (&tsrc)[Cfg::sw_mt], int kg) {
    k_lane = kg * Cfg::run;
    u64 const w_row = Cfg::w_bf16 ? 2ull * g.K : g.K / 2;
#pragma unroll
    for (int j = 0; j < Cfg::sw_nt; ++j)
#pragma unroll
      for (int r = 0; r < Cfg::sw_rpl; ++r) {
        int const row = wrow[j][r];
        w_ok[j][r] = row >= 0;
        w[j][r] = row >= 0 ? g.w + static_cast<u64>(row) * w_row + w_off(k_lane) : g.w;
        ws[j][r] = row >= 0 && !Cfg::w_bf16 ? g.w_scales + static_cast<u64>(row) * (g.K / 32) + s_off(k_lane) : g.w_scales;
      }
    u64 const a_row = Cfg::a_fp8 ? 1ull * g.K : 2ull * g.K;
#pragma unroll
    for (int i = 0; i < Cfg::sw_mt; ++i) {
      int const src = tsrc[i];
      a_ok[i] = src >= 0;
      a[i] = src >= 0 ? g.a + static_cast<u64>(src) * a_row + a_off(k_lane) : g.a;
      as[i] = src >= 0 && Cfg::a_fp8 ? g.a_scales + static_cast<u64>(src) * (g.K / 32) + s_off(k_lane) : g.a_scales;
    }
#pragma unroll
    for (int j = 0; j < Cfg::sw_nt; ++j)
#pragma unroll
      for (int r = 0; r < Cfg::sw_rpl; ++r) {
        fw[j][r] = w_ok[j][r] ? w[j][r] : g.w + w_off(k_lane);
        fws[j][r] = word_of(w_ok[j][r] && !Cfg::w_bf16 ? ws[j][r] : g.w_scales + s_off(k_lane));
        w_bytes[j][r] = w_ok[j][r] ? 16u : 0u;
      }
#pragma unroll
    for (int i = 0; i < Cfg::sw_mt; ++i) {
      fa[i] = a_ok[i] ? a[i] : g.a + a_off(k_lane);
      fas[i] = word_of(a_ok[i] && Cfg::a_fp8 ? as[i] : g.a_scales + s_off(k_lane));
      a_bytes[i] = a_ok[i] ? 16u : 0u;
    }
  }
};

// Queues the copies of one k-tile (weights, their scales, the tokens' activations) into a stage.
template <class Cfg>
MOETUNE_DEV void issue_swapped_tile(const GemmArgs& g, const SwapRing<Cfg>& ring, int stage,
                                    const SwapSources<Cfg>& src, int k0) {
  using R = SwapRing<Cfg>;
  using S = SwapSources<Cfg>;
#pragma unroll
  for (int c = 0; c < Cfg::chunks; ++c) {
    int const kc = k0 + c * Cfg::chunk;  // the chunk's first K
    bool const in_range = kc + src.k_lane < g.k_end;
#pragma unroll
    for (int j = 0; j < Cfg::sw_nt; ++j)
#pragma unroll
      for (int r = 0; r < Cfg::sw_rpl; ++r) {
        bool const ok = src.w_ok[j][r] && in_range;
        const u8* p = ok ? src.w[j][r] + S::w_off(kc) : g.w;
#pragma unroll
        for (int q = 0; q < R::w_pieces; ++q) copy_async<16>(ring.vec(stage, R::wv(c, j, r, q)), p + (ok ? 16 * q : 0), ok);
        if constexpr (!Cfg::w_bf16)
          copy_async<4>(ring.word(stage, R::ww(c, j, r)), ok ? word_of(src.ws[j][r] + S::s_off(kc)) : g.w_scales, ok);
      }
#pragma unroll
    for (int i = 0; i < Cfg::sw_mt; ++i) {
      bool const ok = src.a_ok[i] && in_range;
      const u8* p = ok ? src.a[i] + S::a_off(kc) : g.a;
#pragma unroll
      for (int q = 0; q < R::a_pieces; ++q) copy_async<16>(ring.vec(stage, R::av(c, i, q)), p + (ok ? 16 * q : 0), ok);
      if constexpr (Cfg::a_fp8)
        copy_async<4>(ring.word(stage, R::aw(c, i)), ok ? word_of(src.as[i] + S::s_off(kc)) : g.a_scales, ok);
    }
  }
}

// The same for a tile wholly inside the CTA's K range (every tile but a ragged last one): no
// range test and no select per copy, only the chunk's offset added to precomputed sources.
// The general form above cost ~120 instructions per k-tile and lane, 14 % of the swapped
// stage one's instructions at backbone M = 512 (Nsight Compute source counters,
// results/sm_90/2026-12-01-h200-s5/probes/p5); this path bought only ~1 % (stage one at
// M = 64 390.7 -> 388.2 us, results/sm_90/2026-12-01-h200-s6/probes/p2): the kernel is not
// copy-bound, the decode and the occupancy are what count.
template <class Cfg>
MOETUNE_DEV void issue_full_swapped_tile(const GemmArgs& g, const SwapRing<Cfg>& ring, int stage,
                                         const SwapSources<Cfg>& src, int k0) {
  using R = SwapRing<Cfg>;
  using S = SwapSources<Cfg>;
#pragma unroll
  for (int c = 0; c < Cfg::chunks; ++c) {
    int const kc = k0 + c * Cfg::chunk;
#pragma unroll
    for (int j = 0; j < Cfg::sw_nt; ++j)
#pragma unroll
      for (int r = 0; r < Cfg::sw_rpl; ++r) {
        const u8* p = src.fw[j][r] + S::w_off(kc);
#pragma unroll
        for (int q = 0; q < R::w_pieces; ++q) copy_async_sized<16>(ring.vec(stage, R::wv(c, j, r, q)), p + 16 * q, src.w_bytes[j][r]);
        if constexpr (!Cfg::w_bf16) {
          const u8* word = S::aligned_scale_words ? src.fws[j][r] + S::s_off(kc) : word_of(src.ws[j][r] + S::s_off(kc));
          copy_async_sized<4>(ring.word(stage, R::ww(c, j, r)), S::aligned_scale_words || src.w_ok[j][r] ? word : g.w_scales,
                              src.w_bytes[j][r] >> 2);
        }
      }
#pragma unroll
    for (int i = 0; i < Cfg::sw_mt; ++i) {
      const u8* p = src.fa[i] + S::a_off(kc);
#pragma unroll
      for (int q = 0; q < R::a_pieces; ++q) copy_async_sized<16>(ring.vec(stage, R::av(c, i, q)), p + 16 * q, src.a_bytes[i]);
      if constexpr (Cfg::a_fp8) {
        const u8* word = S::aligned_scale_words ? src.fas[i] + S::s_off(kc) : word_of(src.as[i] + S::s_off(kc));
        copy_async_sized<4>(ring.word(stage, R::aw(c, i)), S::aligned_scale_words || src.a_ok[i] ? word : g.a_scales,
                            src.a_bytes[i] >> 2);
      }
    }
  }
}

// acc += W x X for one k-tile whose copies have landed in `stage`.
template <class Cfg>
MOETUNE_DEV void compute_swapped_tile(const GemmArgs& g, const SwapRing<Cfg>& ring, int stage,
                                      const SwapSources<Cfg>& src, int k0,
                                      float (&acc)[Cfg::sw_chains][Cfg::sw_mt][Cfg::sw_nt][4]) {
  using R = SwapRing<Cfg>;
  using S = SwapSources<Cfg>;
#pragma unroll
  for (int c = 0; c < Cfg::chunks; ++c) {
    int const kc = k0 + c * Cfg::chunk;
    if (kc >= g.k_end) break;  // whole chunk past the range: same for the warp
    u32 x[Cfg::sw_mt][16];
#pragma unroll
    for (int i = 0; i < Cfg::sw_mt; ++i) {
      if constexpr (Cfg::a_fp8) {
        u32x4 const v0 = *reinterpret_cast<const u32x4*>(ring.vec(stage, R::av(c, i, 0)));
        u32x4 const v1 = *reinterpret_cast<const u32x4*>(ring.vec(stage, R::av(c, i, 1)));
        u32 const word = *reinterpret_cast<const u32*>(ring.word(stage, R::aw(c, i)));
        float const s = e8m0_to_f32(src.a_ok[i] ? byte_of(word, src.as[i] + S::s_off(kc)) : 0u);
        if constexpr (Cfg::w_repacked) {
          // Natural pairs, as the repacked weights decode.
          u32 const codes[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
#pragma unroll
          for (int q = 0; q < 8; ++q) fp8x4_to_bf16x4<Cfg::fp8>(codes[q], s, x[i][2 * q], x[i][2 * q + 1]);
        } else {
          fp8x8_to_pairs<Cfg>(v0.x, v0.y, s, x[i] + 0);
          fp8x8_to_pairs<Cfg>(v0.z, v0.w, s, x[i] + 4);
          fp8x8_to_pairs<Cfg>(v1.x, v1.y, s, x[i] + 8);
          fp8x8_to_pairs<Cfg>(v1.z, v1.w, s, x[i] + 12);
        }
      } else if constexpr (Cfg::w_repacked) {
        // Repacked weights decode to natural pairs: the activations are used as loaded.
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          u32x4 const v = *reinterpret_cast<const u32x4*>(ring.vec(stage, R::av(c, i, q)));
          x[i][4 * q] = v.x, x[i][4 * q + 1] = v.y, x[i][4 * q + 2] = v.z, x[i][4 * q + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          permute8_bf16(*reinterpret_cast<const u32x4*>(ring.vec(stage, R::av(c, i, q))), x[i] + 4 * q);
      }
    }
#pragma unroll
    for (int j = 0; j < Cfg::sw_nt; ++j) {
      u32 w[Cfg::sw_rpl][16];
#pragma unroll
      for (int r = 0; r < Cfg::sw_rpl; ++r) {
        if constexpr (Cfg::w_bf16) {
#pragma unroll
          for (int q = 0; q < 4; ++q)
            permute8_bf16(*reinterpret_cast<const u32x4*>(ring.vec(stage, R::wv(c, j, r, q))), w[r] + 4 * q);
        } else {
          u32x4 const raw = *reinterpret_cast<const u32x4*>(ring.vec(stage, R::wv(c, j, r, 0)));
          u32 const word = *reinterpret_cast<const u32*>(ring.word(stage, R::ww(c, j, r)));
          u32 const sb = src.w_ok[j][r] ? byte_of(word, src.ws[j][r] + S::s_off(kc)) : 0u;
          if constexpr (Cfg::w_repacked) decode_mxfp4_repacked(raw, sb, w[r]);
          else decode_mxfp4_pairs(raw, sb, w[r]);
        }
      }
#pragma unroll
      for (int s = 0; s < Cfg::steps; ++s)
#pragma unroll
        for (int i = 0; i < Cfg::sw_mt; ++i)
          swapped_mma_step<Cfg>(acc[s % Cfg::sw_chains][i][j], w, x[i], s);
    }
  }
}

template <class Cfg>
MOETUNE_DEV void swap_gemm_tile(const GemmArgs& g, u8* smem) {
  constexpr int P = Cfg::path;
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  int const warp_n = warp % Cfg::sw_warps_n;
  int const warp_k = warp / Cfg::sw_warps_n;
  int const kg = frag_kgroup<P>(lane);

  constexpr int chains = Cfg::sw_chains;
  float acc[chains][Cfg::sw_mt][Cfg::sw_nt][4];
#pragma unroll
  for (int h = 0; h < chains; ++h)
#pragma unroll
    for (int i = 0; i < Cfg::sw_mt; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::sw_nt; ++j)
#pragma unroll
        for (int a = 0; a < 4; ++a) acc[h][i][j][a] = 0.0f;

  int wrow[Cfg::sw_nt][Cfg::sw_rpl];
#pragma unroll
  for (int j = 0; j < Cfg::sw_nt; ++j)
#pragma unroll
    for (int r = 0; r < Cfg::sw_rpl; ++r)
      wrow[j][r] = weight_row<Cfg>(g, (warp_n * Cfg::sw_nt + j) * 16 + swapped_row<Cfg>(lane, r));
  int tsrc[Cfg::sw_mt];
#pragma unroll
  for (int i = 0; i < Cfg::sw_mt; ++i) tsrc[i] = g.row_src[i * Cfg::sw_tn + swapped_token<Cfg>(lane)];

  // This warp's k-tiles: warp_k, warp_k + warps_k, ... of the CTA's range, through a ring of
  // `stages` tiles: stages-1 tiles are always in flight while one computes. One commit group
  // per tile (empty ones past the end too), so "wait until at most stages-1 groups pend" is
  // always "tile t has landed".
  u8* const ring_base = smem + warp * (Cfg::sw_ring_bytes / Cfg::warps);
  SwapRing<Cfg> const ring{ring_base + lane * 16,
                           ring_base + SwapRing<Cfg>::vecs * warp_size * 16 + lane * 4};
  SwapSources<Cfg> const sources(g, wrow, tsrc, kg);
  int const n_tiles = (g.k_end - g.k_begin + Cfg::block_k - 1) / Cfg::block_k;
  int const my_tiles = n_tiles > warp_k ? (n_tiles - warp_k + Cfg::sw_warps_k - 1) / Cfg::sw_warps_k : 0;
  auto tile_k0 = [&](int t) { return g.k_begin + (warp_k + t * Cfg::sw_warps_k) * Cfg::block_k; };
  auto issue = [&](int stage, int k0) {
    if (k0 + Cfg::block_k <= g.k_end) issue_full_swapped_tile<Cfg>(g, ring, stage, sources, k0);
    else issue_swapped_tile<Cfg>(g, ring, stage, sources, k0);
  };
#pragma unroll
  for (int t = 0; t < Cfg::stages - 1; ++t) {
    if (t < my_tiles) issue(t, tile_k0(t));
    copy_commit();
  }
  for (int t = 0; t < my_tiles; ++t) {
    int const ahead = t + Cfg::stages - 1;
    if (ahead < my_tiles) issue(ahead % Cfg::stages, tile_k0(ahead));
    copy_commit();
    copy_wait<Cfg::stages - 1>();
    compute_swapped_tile<Cfg>(g, ring, t % Cfg::stages, sources, tile_k0(t), acc);
  }
  barrier();  // the C tiles below reuse the rings of warps that may still be reading them

  // Each K-splitting warp writes its partial tile (token-major) to its own LDS slice; slice 0
  // then receives the sum, in a fixed order.
  float* ct = reinterpret_cast<float*>(smem);
  float* mine = ct + warp_k * Cfg::block_m * Cfg::c_stride;
#pragma unroll
  for (int i = 0; i < Cfg::sw_mt; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::sw_nt; ++j)
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        int rr, tt;
        acc_coord<P>(lane, a, rr, tt);  // (weight row, token) under the swapped roles
        int const v = (warp_n * Cfg::sw_nt + j) * 16 + rr;
        float sum = acc[0][i][j][a];
#pragma unroll
        for (int h = 1; h < chains; ++h) sum += acc[h][i][j][a];
        mine[(i * Cfg::sw_tn + tt) * Cfg::c_stride + v] = sum;
      }
  barrier();
  if constexpr (Cfg::sw_warps_k > 1) {
    for (int idx = tid; idx < Cfg::block_m * Cfg::nv; idx += Cfg::threads) {
      int const off = (idx / Cfg::nv) * Cfg::c_stride + idx % Cfg::nv;
      float s = ct[off];
#pragma unroll
      for (int w = 1; w < Cfg::sw_warps_k; ++w) s += ct[w * Cfg::block_m * Cfg::c_stride + off];
      ct[off] = s;
    }
    barrier();
  }
}

}  // namespace moetune
