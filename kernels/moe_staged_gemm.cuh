#pragma once
// The grouped GEMM for many tokens per expert (the "staged" main loop, sm_90).
//
// Tokens sit on the MMA's M side as in moe_gemm.cuh, but nothing is streamed through
// registers: every k-tile of both operands goes global -> LDS with cp.async into a ring of
// `stages` tiles, and
//   * the MXFP4 weight tile is decoded ONCE per CTA into a bf16 tile in LDS (each thread
//     decodes the 16-byte pieces it copied itself), so the decode cost is shared by all
//     block_m tokens instead of being paid per warp and per fragment;
//   * both operands reach the MMA through ldmatrix.x4 from XOR-swizzled 128-byte rows (8
//     lanes reading one 16-byte column of 8 rows hit 8 different bank groups);
//   * a8w4 activations arrive as fp8 codes and are decoded to a bf16 tile next to the
//     weights (sm_90 has no fp8 x bf16 MMA); with fragment decode (below) they stay e4m3
//     codes and meet e4m3 weight codes in the fp8 MMA instead.
// Per k-tile kt, one barrier: wait until tile kt+1 has landed, barrier, queue the copies of
// tile kt+stages-1 into the ring slot tile kt-1 freed, then multiply tile kt (decoded during
// the previous k-tile) while decoding tile kt+1 into the other buffer, the decode's integer
// work interleaved between the k16 steps so it issues while the tensor cores run. Hence a
// ring of at least 3 tiles and double-buffered decoded tiles.
//
// K order is natural everywhere (ldmatrix takes whole 16-byte runs of 8 K), so the weight
// decode is the natural-pair one below (one byte permute more per pair than the swapped
// kernels' pair order, which would need the activations permuted to match).
// On return the result is in LDS as fp32 C[block_m][c_stride] (after a barrier), exactly as
// gemm_tile leaves it, so both stages' epilogues are shared.
#include "moe_gemm.cuh"
#include "moe_swap_gemm.cuh"

namespace moetune {

// Byte offset of 16-byte chunk `chunk` of row `row` in a bf16 tile of block_k * 2-byte rows.
template <class Cfg>
MOETUNE_DEV int staged_swizzle(int row, int chunk) {
  return row * (2 * Cfg::block_k) + ((chunk ^ (row & 7)) << 4);
}

// 16 bytes of MXFP4 (32 elements, one scale) -> 16 bf16x2 words in natural K order (word i
// holds elements 2i, 2i+1). For byte b of a word w, one byte permute builds u with the low
// nibble at bits 12..15 (the high nibble of byte b of w << 4) and the high nibble at 28..31
// (of byte b of w); then the swapped kernels' trick applies: magnitudes to bf16 bits 6..8 /
// 22..24, signs already at 15 / 31, one bf16x2 multiply by 2^(s-1). About 5 instructions per
// pair (a shift-and-select version took 7.75: results/sm_90/2026-12-01-h200-s5/probes/p5).
MOETUNE_DEV void decode_mxfp4_natural(const u32x4& raw, u32 scale_byte, u32 (&out)[16]) {
  u32 const w4[4] = {raw.x, raw.y, raw.z, raw.w};
#if defined(MOETUNE_SM80_PLUS)
  if (scale_byte >= 2u && scale_byte <= 128u) {
    u32 const f = e2m1_pair_factor(scale_byte);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      u32 const w = w4[i];
      u32 const p = w << 4;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        // Output byte 1 <- byte b of p, byte 3 <- byte b of w (bytes 0 and 2: don't care).
        u32 u;
        asm("prmt.b32 %0, %1, %2, %3;" : "=r"(u) : "r"(p), "r"(w), "r"(static_cast<u32>(((4 + b) << 12) | (b << 4))));
        out[4 * i + b] = e2m1x2_at_nibbles_3_7(u, f);
      }
    }
    return;
  }
#endif
  float const s = e8m0_to_f32(scale_byte);
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int b = 0; b < 4; ++b) out[4 * i + b] = e2m1x2_to_bf16x2((w4[i] >> (8 * b)) & 0xffu, s);
}

// Fragment decode (Cfg::staged_fd): the A tile's 16-byte chunks are swizzled by row parity
// instead (a lane reads row r's chunk 4p + t, 8 lanes of a 128-bit phase hold rows r, r+1 and
// t = 0..3: the parity swizzle puts the two rows in different halves of the 32 banks), and a
// weight row's 32-K pieces by a row-dependent XOR so the 8 rows of a fragment, read one word
// per lane, fall in 8 different bank groups.
template <class Cfg>
MOETUNE_DEV int staged_fd_a_offset(int row, int chunk) {
  return row * (2 * Cfg::block_k) + ((chunk ^ ((row & 1) << 2)) << 4);
}
template <class Cfg>
MOETUNE_DEV int staged_fd_piece_swizzle(int row) {
  constexpr int wpr = Cfg::block_k / 32;  // 2, 4 or 8 pieces per row and k-tile
  return (row * wpr / 8) % wpr;
}
// a8w4 fragment decode reads 8 fp8 codes (K 8t..8t+7 of a 32-K piece) per row and lane: a
// half-warp (rows g..g+3, t = 0..3) reads 32 bytes of each of 4 rows, which fall in 4
// different 8-bank groups when the rows' 32-byte pieces are XOR-swizzled by the row (rows of
// 64 bytes: two per 128-byte line, so by row / 2).
template <class Cfg>
MOETUNE_DEV int staged_fd8_a_swizzle(int row) {
  return Cfg::block_k / 32 >= 4 ? (row & 3) : ((row >> 1) & 1);
}
template <class Cfg>
MOETUNE_DEV int staged_fd8_a_offset(int row, int piece16) {
  return row * Cfg::block_k + ((((piece16 >> 1) ^ staged_fd8_a_swizzle<Cfg>(row)) << 5) | ((piece16 & 1) << 4));
}

// Where a thread's copies come from and where they land, resolved once per CTA: the thread
// copies A pieces tid, tid + threads, ... and weight pieces likewise, the same ones in every
// k-tile, and decodes the weight (and a8w4 activation) pieces it copied itself.
// LDS offsets are relative to a tile; a swizzled offset row * row_bytes + (chunk ^ (row & 7)) * 16
// has zero bits where chunk-level XORs act, so later chunk steps are one XOR each.
template <class Cfg>
struct StagedSources {
  static constexpr int a_per_thread = (Cfg::st_a_pieces + Cfg::threads - 1) / Cfg::threads;
  static constexpr int w_per_thread = (Cfg::st_w_pieces + Cfg::threads - 1) / Cfg::threads;
  static constexpr int a_piece_elems = Cfg::a_fp8 ? 16 : 8;
  static constexpr int a_pieces_row = Cfg::st_a_row / 16;
  static constexpr int w_pieces_row = Cfg::block_k / 32;
  static constexpr bool a_ragged = a_per_thread * Cfg::threads > Cfg::st_a_pieces;
  static constexpr bool w_ragged = w_per_thread * Cfg::threads > Cfg::st_w_pieces;
  const u8* a[a_per_thread];   // the row's first byte plus the piece's K offset in a tile
  const u8* as[a_per_thread];  // a8w4: the row's scale bytes plus the piece's
  const u8* w[w_per_thread];
  const u8* ws[w_per_thread];
  // The piece's K offset in a tile (copied while below k_end - k0); padding rows and rows past
  // the matrix hold a value past any K, so they are only ever zero-filled.
  int a_k[a_per_thread];
  int a_dst[a_per_thread];     // ring offset of the piece (bf16: swizzled)
  int a_dec[a_per_thread];     // a8w4: decoded-tile offset of the piece's first chunk
  int w_k[w_per_thread];       // as a_k
  int w_dec[w_per_thread];     // decoded-tile offset of the piece's first chunk
  int w_dst[w_per_thread];     // ring offset of the piece (fragment decode: swizzled)

  MOETUNE_DEV StagedSources(const GemmArgs& g, int tid) {
    u64 const a_row = Cfg::a_fp8 ? 1ull * g.K : 2ull * g.K;
#pragma unroll
    for (int i = 0; i < a_per_thread; ++i) {
      int const idx = tid + i * Cfg::threads;
      int const r = idx / a_pieces_row;
      int const p = idx % a_pieces_row;
      int const kp = p * a_piece_elems;
      int const src = !a_ragged || idx < Cfg::st_a_pieces ? g.row_src[r] : -1;
      a[i] = src >= 0 ? g.a + static_cast<u64>(src) * a_row + (Cfg::a_fp8 ? kp : 2 * kp) : g.a;
      as[i] = src >= 0 && Cfg::a_fp8 ? g.a_scales + static_cast<u64>(src) * (g.K / 32) + kp / 32 : g.a_scales;
      a_k[i] = src >= 0 ? kp : 0x3fffffff;
      a_dst[i] = Cfg::a_fp8 && Cfg::staged_fd ? staged_fd8_a_offset<Cfg>(r, p)
                 : Cfg::a_fp8                 ? r * Cfg::st_a_row + p * 16
                 : Cfg::staged_fd             ? staged_fd_a_offset<Cfg>(r, p)
                                              : staged_swizzle<Cfg>(r, p);
      a_dec[i] = staged_swizzle<Cfg>(r, 2 * p);
    }
#pragma unroll
    for (int i = 0; i < w_per_thread; ++i) {
      int const idx = tid + i * Cfg::threads;
      int const v = idx / w_pieces_row;
      int const p = idx % w_pieces_row;
      int const row = !w_ragged || idx < Cfg::st_w_pieces ? weight_row<Cfg>(g, v) : -1;
      w[i] = row >= 0 ? g.w + static_cast<u64>(row) * (g.K / 2) + p * 16 : g.w;
      ws[i] = row >= 0 ? g.w_scales + static_cast<u64>(row) * (g.K / 32) + p : g.w_scales;
      w_k[i] = row >= 0 ? p * 32 : 0x3fffffff;
      w_dec[i] = staged_swizzle<Cfg>(v, 4 * p);
      w_dst[i] = Cfg::staged_fd ? (v * w_pieces_row + (p ^ staged_fd_piece_swizzle<Cfg>(v))) * 16 : idx * 16;
    }
  }
};

// LDS regions of the staged main loop (sizes in moe_config.cuh, st_*).
template <class Cfg>
struct StagedTiles {
  u8* base;
  static constexpr int a_ring = Cfg::block_m * Cfg::st_a_row;
  static constexpr int a_words = Cfg::a_fp8 ? Cfg::st_a_pieces * 4 : 0;
  static constexpr int w_raw = Cfg::st_w_pieces * 16;
  static constexpr int w_tile = Cfg::nv * Cfg::block_k * 2;
  static constexpr int a_tile_bytes = Cfg::block_m * Cfg::block_k * 2;
  MOETUNE_DEV u8* stage(int s) const { return base + s * Cfg::st_stage_bytes; }
  MOETUNE_DEV u8* a_ring_tile(int s) const { return stage(s); }
  MOETUNE_DEV u8* a_scale_words(int s) const { return stage(s) + a_ring; }
  MOETUNE_DEV u8* w_raw_tile(int s) const { return stage(s) + a_ring + a_words; }
  MOETUNE_DEV u8* w_scale_words(int s) const { return stage(s) + a_ring + a_words + w_raw; }
  MOETUNE_DEV u8* w_bf16(int b) const { return base + Cfg::stages * Cfg::st_stage_bytes + b * w_tile; }
  MOETUNE_DEV u8* a_bf16(int b) const { return base + Cfg::stages * Cfg::st_stage_bytes + 2 * w_tile + b * a_tile_bytes; }
};

// Queues one k-tile's copies (its first K is k0) into ring stage s.
template <class Cfg>
MOETUNE_DEV void issue_staged_tile(const GemmArgs& g, const StagedTiles<Cfg>& t, int s,
                                   const StagedSources<Cfg>& src, int tid, int k0) {
  using S = StagedSources<Cfg>;
  int const room = g.k_end - k0;  // K left from this tile's start
  u8* const ring = t.a_ring_tile(s);
#pragma unroll
  for (int i = 0; i < S::a_per_thread; ++i) {
    if (S::a_ragged && tid + i * Cfg::threads >= Cfg::st_a_pieces) break;
    bool const ok = src.a_k[i] < room;
    u64 const koff = Cfg::a_fp8 ? static_cast<u64>(k0) : 2ull * k0;
    copy_async<16>(ring + src.a_dst[i], ok ? src.a[i] + koff : g.a, ok);
    if constexpr (Cfg::a_fp8)
      copy_async<4>(t.a_scale_words(s) + (tid + i * Cfg::threads) * 4, ok ? word_of(src.as[i] + k0 / 32) : g.a_scales, ok);
  }
  u8* const raw = t.w_raw_tile(s);
  u8* const words = t.w_scale_words(s) + tid * 4;
#pragma unroll
  for (int i = 0; i < S::w_per_thread; ++i) {
    if (S::w_ragged && tid + i * Cfg::threads >= Cfg::st_w_pieces) break;
    bool const ok = src.w_k[i] < room;
    copy_async<16>(raw + src.w_dst[i], ok ? src.w[i] + k0 / 2 : g.w, ok);
    copy_async<4>(words + i * Cfg::threads * 4, ok ? word_of(src.ws[i] + k0 / 32) : g.w_scales, ok);
  }
}

// Decodes weight piece i of this thread from ring stage s into decoded buffer b.
// Zero-filled pieces decode to zeros (their scale byte reads 0 and takes the exact path).
template <class Cfg>
MOETUNE_DEV void decode_staged_weight(const StagedTiles<Cfg>& t, int s, int b, const StagedSources<Cfg>& src,
                                      int tid, int i, int k0) {
  u32x4 const raw = *reinterpret_cast<const u32x4*>(t.w_raw_tile(s) + (tid + i * Cfg::threads) * 16);
  u32 const word = *reinterpret_cast<const u32*>(t.w_scale_words(s) + (tid + i * Cfg::threads) * 4);
  u32 const sb = byte_of(word, src.ws[i] + k0 / 32);
  u32 d[16];
  if constexpr (Cfg::w_repacked) decode_mxfp4_repacked(raw, sb, d);  // same natural pair order
  else decode_mxfp4_natural(raw, sb, d);
  u8* const tile = t.w_bf16(b);
#pragma unroll
  for (int q = 0; q < 4; ++q)
    *reinterpret_cast<u32x4*>(tile + (src.w_dec[i] ^ (q << 4))) = u32x4{d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]};
}

// a8w4: decodes activation piece i (16 fp8 codes, two bf16 chunks) into decoded buffer b.
template <class Cfg>
MOETUNE_DEV void decode_staged_activation(const StagedTiles<Cfg>& t, int s, int b, const StagedSources<Cfg>& src,
                                          int tid, int i, int k0) {
  u32x4 const v = *reinterpret_cast<const u32x4*>(t.a_ring_tile(s) + src.a_dst[i]);
  u32 const word = *reinterpret_cast<const u32*>(t.a_scale_words(s) + (tid + i * Cfg::threads) * 4);
  float const sc = e8m0_to_f32(byte_of(word, src.as[i] + k0 / 32));
  u32 o[8];
  fp8x4_to_bf16x4<Cfg::fp8>(v.x, sc, o[0], o[1]);
  fp8x4_to_bf16x4<Cfg::fp8>(v.y, sc, o[2], o[3]);
  fp8x4_to_bf16x4<Cfg::fp8>(v.z, sc, o[4], o[5]);
  fp8x4_to_bf16x4<Cfg::fp8>(v.w, sc, o[6], o[7]);
  u8* const tile = t.a_bf16(b);
  *reinterpret_cast<u32x4*>(tile + src.a_dec[i]) = u32x4{o[0], o[1], o[2], o[3]};
  *reinterpret_cast<u32x4*>(tile + (src.a_dec[i] ^ 16)) = u32x4{o[4], o[5], o[6], o[7]};
}

// One k-tile: acc += A x W^T from A tile `a` and decoded weight tile `w` (both bf16,
// swizzled), with the decode of the next tile (ring stage ns into buffer nb) interleaved
// between the k16 steps so that the decode's integer work issues while the MMAs run.
// a_lane / b_lane: this lane's ldmatrix offsets for k16 step 0; step kk is offset ^ (kk << 5).
template <class Cfg>
MOETUNE_DEV void staged_step(const StagedTiles<Cfg>& t, const u8* a, const u8* w, int a_lane, int b_lane,
                             bool decode_next, int ns, int nb, const StagedSources<Cfg>& src, int tid,
                             int nk0, float (&acc)[Cfg::mt][Cfg::nt][4]) {
  using S = StagedSources<Cfg>;
  constexpr int steps = Cfg::block_k / 16;
  constexpr int rb = 2 * Cfg::block_k;  // bytes per tile row
#pragma unroll
  for (int kk = 0; kk < steps; ++kk) {
    u32 af[Cfg::mt][4];
    const u8* ap = a + (a_lane ^ (kk << 5));
#pragma unroll
    for (int i = 0; i < Cfg::mt; ++i) ldmatrix_x4(af[i], ap + i * 16 * rb);
    u32 bf[Cfg::nt][2];
    const u8* bp = w + (b_lane ^ (kk << 5));
#pragma unroll
    for (int j = 0; j < Cfg::nt; j += 2) {
      u32 r[4];
      ldmatrix_x4(r, bp + j * 8 * rb);
      bf[j][0] = r[0], bf[j][1] = r[1], bf[j + 1][0] = r[2], bf[j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < Cfg::mt; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::nt; ++j)
        mma_m16n8k16_bf16(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
    // This step's share of the next tile's decode.
    if (decode_next) {
#pragma unroll
      for (int i = kk; i < S::w_per_thread; i += steps) {
        if (S::w_ragged && tid + i * Cfg::threads >= Cfg::st_w_pieces) break;
        decode_staged_weight<Cfg>(t, ns, nb, src, tid, i, nk0);
      }
      if constexpr (Cfg::a_fp8) {
#pragma unroll
        for (int i = kk; i < S::a_per_thread; i += steps) {
          if (S::a_ragged && tid + i * Cfg::threads >= Cfg::st_a_pieces) break;
          decode_staged_activation<Cfg>(t, ns, nb, src, tid, i, nk0);
        }
      }
    }
  }
}

// The accumulators both staged main loops start from, and their k-tile count.
template <class Cfg>
MOETUNE_DEV void staged_zero(float (&acc)[Cfg::mt][Cfg::nt][4]) {
#pragma unroll
  for (int i = 0; i < Cfg::mt; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::nt; ++j)
#pragma unroll
      for (int a = 0; a < 4; ++a) acc[i][j][a] = 0.0f;
}
template <class Cfg>
MOETUNE_DEV int staged_k_tiles(const GemmArgs& g) {
  return (g.k_end - g.k_begin + Cfg::block_k - 1) / Cfg::block_k;
}

template <class Cfg>
MOETUNE_DEV void staged_gemm_tile(const GemmArgs& g, u8* smem) {
  using S = StagedSources<Cfg>;
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  int const warp_m = warp / Cfg::warps_n;
  int const warp_n = warp % Cfg::warps_n;

  float acc[Cfg::mt][Cfg::nt][4];
  staged_zero<Cfg>(acc);
  StagedTiles<Cfg> const t{smem};
  StagedSources<Cfg> const src(g, tid);
  int const tiles = staged_k_tiles<Cfg>(g);
  // ldmatrix.x4 lanes: A matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15); B matrices
  // (k 0-7 | 8-15) x (weight rows 0-7 | 8-15).
  int const a_lane = staged_swizzle<Cfg>(warp_m * Cfg::warp_rows + (lane & 15), lane >> 4);
  int const b_lane = staged_swizzle<Cfg>(warp_n * Cfg::nt * 8 + (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);

  // Prologue: stages-1 tiles in flight (one commit group per tile slot, empty or not, so
  // "all but n groups done" always names the same tiles), then tile 0 decoded.
#pragma unroll
  for (int s = 0; s < Cfg::stages - 1; ++s) {
    if (s < tiles) issue_staged_tile<Cfg>(g, t, s, src, tid, g.k_begin + s * Cfg::block_k);
    copy_commit();
  }
  copy_wait<Cfg::stages - 2>();
  barrier();
#pragma unroll
  for (int i = 0; i < S::w_per_thread; ++i) {
    if (S::w_ragged && tid + i * Cfg::threads >= Cfg::st_w_pieces) break;
    decode_staged_weight<Cfg>(t, 0, 0, src, tid, i, g.k_begin);
  }
  if constexpr (Cfg::a_fp8) {
#pragma unroll
    for (int i = 0; i < S::a_per_thread; ++i) {
      if (S::a_ragged && tid + i * Cfg::threads >= Cfg::st_a_pieces) break;
      decode_staged_activation<Cfg>(t, 0, 0, src, tid, i, g.k_begin);
    }
  }
  for (int kt = 0; kt < tiles; ++kt) {
    // Tile kt+1 has landed (stages-3 newer groups may still fly); after the barrier tile kt's
    // decode is visible, and every reader of tile kt-1 (its ring slot, its decoded buffer)
    // is done, so both can be refilled.
    copy_wait<Cfg::stages - 3>();
    barrier();
    int const ahead = kt + Cfg::stages - 1;
    if (ahead < tiles) issue_staged_tile<Cfg>(g, t, ahead % Cfg::stages, src, tid, g.k_begin + ahead * Cfg::block_k);
    copy_commit();
    int const b = kt & 1;
    const u8* a = Cfg::a_fp8 ? t.a_bf16(b) : t.a_ring_tile(kt % Cfg::stages);
    staged_step<Cfg>(t, a, t.w_bf16(b), a_lane, b_lane, kt + 1 < tiles, (kt + 1) % Cfg::stages, b ^ 1, src,
                     tid, g.k_begin + (kt + 1) * Cfg::block_k, acc);
  }
  copy_wait<0>();

  store_accumulators<Cfg, path_sm80>(smem, acc, lane, warp_m, warp_n);
}

// ---- Fragment decode (Cfg::staged_fd) ---------------------------------------------------------
// With one warp row (block_m <= 64) every weight row is multiplied by exactly one warp, so the
// decoded LDS tile buys no sharing: it only costs LDS traffic (cp.async in, raw read, 64 bytes
// of bf16 written and read back by ldmatrix per 32 elements), which Nsight Compute put at ~80 %
// of the L1/LDS pipe at backbone M = 512 (results/sm_90/2026-12-01-h200-s7/probes/p1), and a
// double-buffered 32 KB tile that held the CTA to 3 per SM. Here lane (g, t) of a warp reads,
// per 32-K piece of weight row g of each of its 8-row fragments, the one repacked word t: its
// four natural pairs (elements 8t .. 8t+7) are the lane's B registers for the piece's two k16
// steps. The MMA sums over K in any order as long as A and B agree, so the lane's A registers
// are the same K positions of its rows: one 16-byte LDS read (chunk 4p + t) per row and piece.
// The scales become bf16x2 factors once per k-tile, in place, by the thread that copied them;
// a scale outside the fast path's range (2..128) marks the k-tile, found at the k-tile's one
// barrier (bar.red.or), and only such tiles test each lane's factor for the exact path.

// Tile kt's scale words copied by this thread -> bf16x2 factors 2^(s-1) in place (zero-filled
// pieces decode to zeros with any factor); the raw scale byte is kept where the exact path is
// needed. Returns whether this thread saw such a scale.
#if defined(MOETUNE_SM80_PLUS)
template <class Cfg>
MOETUNE_DEV bool staged_fd_factors(const GemmArgs& g, const StagedTiles<Cfg>& t, int s,
                                   const StagedSources<Cfg>& src, int tid, int k0) {
  using S = StagedSources<Cfg>;
  int const room = g.k_end - k0;
  bool exact = false;
#pragma unroll
  for (int i = 0; i < S::w_per_thread; ++i) {
    if (S::w_ragged && tid + i * Cfg::threads >= Cfg::st_w_pieces) break;
    u32* const slot = reinterpret_cast<u32*>(t.w_scale_words(s) + (tid + i * Cfg::threads) * 4);
    u32 const sb = byte_of(*slot, src.ws[i] + k0 / 32);
    bool const fast = sb >= 2u && sb <= 128u;
    bool const filled = src.w_k[i] < room;
    exact |= filled && !fast;
    *slot = fast || !filled ? e2m1_pair_factor(fast ? sb : 127u) : sb;
  }
  return exact;
}

// One repacked word -> the lane's four bf16x2 B registers. `f` is a factor (> 0xff) or, in a
// tile marked exact, possibly the raw scale byte. The test is compiled only into the exact
// tiles' copy of the k-tile: a branch per word splits the k-tile into basic blocks and keeps
// the compiler from overlapping one fragment's LDS reads with another's decode.
template <bool ExactTile>
MOETUNE_DEV void staged_fd_decode_word(u32 w, u32 f, u32 (&b)[4]) {
  if (!ExactTile || f > 0xffu) {
#pragma unroll
    for (int q = 0; q < 4; ++q) b[q] = mul_bf16x2(e2m1x2_repacked_pattern(w, q), f);
  } else {
    float const s = e8m0_to_f32(f);
#pragma unroll
    for (int q = 0; q < 4; ++q) b[q] = e2m1x2_repacked_exact(w, q, s);
  }
}

// One k-tile from ring stage s: per 32-K piece, decode the lane's words of every fragment, read
// the matching A chunks, two k16 steps of MMAs.
template <class Cfg, bool ExactTile>
MOETUNE_DEV void staged_fd_step(const StagedTiles<Cfg>& t, int s, const int (&a_off)[Cfg::mt],
                                int a_swz, const int (&w_off)[Cfg::nt], const int (&f_off)[Cfg::nt], int w_swz,
                                int lane_t, float (&acc)[Cfg::mt][Cfg::nt][4]) {
  constexpr int wpr = Cfg::block_k / 32;
  constexpr int rb = 2 * Cfg::block_k;
  const u8* const a = t.a_ring_tile(s);
  const u8* const raw = t.w_raw_tile(s);
  const u8* const fac = t.w_scale_words(s);
#pragma unroll
  for (int p = 0; p < wpr; ++p) {
    u32 b[Cfg::nt][4];
#pragma unroll
    for (int j = 0; j < Cfg::nt; ++j) {
      u32 const w = *reinterpret_cast<const u32*>(raw + w_off[j] + ((p ^ w_swz) << 4));
      u32 const f = *reinterpret_cast<const u32*>(fac + f_off[j] + 4 * p);
      staged_fd_decode_word<ExactTile>(w, f, b[j]);
    }
    int const chunk = ((4 * p + lane_t) ^ a_swz) << 4;
#pragma unroll
    for (int i = 0; i < Cfg::mt; ++i) {
      u32x4 const lo = *reinterpret_cast<const u32x4*>(a + a_off[i] + chunk);           // row g
      u32x4 const hi = *reinterpret_cast<const u32x4*>(a + a_off[i] + 8 * rb + chunk);  // row g + 8
#pragma unroll
      for (int j = 0; j < Cfg::nt; ++j) {
        mma_m16n8k16_bf16(acc[i][j], lo.x, hi.x, lo.y, hi.y, b[j][0], b[j][1]);
        mma_m16n8k16_bf16(acc[i][j], lo.z, hi.z, lo.w, hi.w, b[j][2], b[j][3]);
      }
    }
  }
}

// ---- a8w4: fragment decode into fp8 MMAs -----------------------------------------------------
// sm_89+ multiplies e4m3 x e4m3 (mma.sync m16n8k32), and both a8w4 operands are fp8 with one
// scale per 32 K: the activations' codes go to the MMA as they arrived, each weight word
// becomes two words of e4m3 codes (e2m1x8_to_e4m3_scaled, natural layout: 7 instructions per
// 8 elements, no range test), and every 32-K piece is one MMA whose fp32 partial sum one FMA
// per accumulator scales by sa(token) * sw(row). Any scale byte, 0 and 255 included, goes
// through fp32 as in the reference; the decode's 2^-6 is undone once at the end. The lane's
// B word holds even elements in b0 and odd ones in b1, so its A registers take the same K
// positions from the 8 activation bytes of each row with one byte permute each.

// Tile kt's scale words copied by this thread (weights and activations) -> fp32 scales in place.
template <class Cfg>
MOETUNE_DEV void staged_fd8_scales(const StagedTiles<Cfg>& t, int s, const StagedSources<Cfg>& src, int tid, int k0) {
  using S = StagedSources<Cfg>;
#pragma unroll
  for (int i = 0; i < S::w_per_thread; ++i) {
    if (S::w_ragged && tid + i * Cfg::threads >= Cfg::st_w_pieces) break;
    u32* const slot = reinterpret_cast<u32*>(t.w_scale_words(s) + (tid + i * Cfg::threads) * 4);
    *slot = __builtin_bit_cast(u32, e8m0_to_f32(byte_of(*slot, src.ws[i] + k0 / 32)));
  }
#pragma unroll
  for (int i = 0; i < S::a_per_thread; ++i) {
    if (S::a_ragged && tid + i * Cfg::threads >= Cfg::st_a_pieces) break;
    u32* const slot = reinterpret_cast<u32*>(t.a_scale_words(s) + (tid + i * Cfg::threads) * 4);
    *slot = __builtin_bit_cast(u32, e8m0_to_f32(byte_of(*slot, src.as[i] + k0 / 32)));
  }
}

// One k-tile from ring stage s. a_off / sa_off: row g of each m fragment in the fp8 ring and
// in the scale words (row g + 8 is 8 rows on); w_off as in staged_fd_step; sw_off: the scale
// of weight row 2t of each n fragment (row 2t + 1 is one row on).
template <class Cfg>
MOETUNE_DEV void staged_fd8_step(const StagedTiles<Cfg>& t, int s, const int (&a_off)[Cfg::mt],
                                 const int (&sa_off)[Cfg::mt], int a_swz, const int (&w_off)[Cfg::nt],
                                 const int (&sw_off)[Cfg::nt], int w_swz, int lane_t,
                                 float (&acc)[Cfg::mt][Cfg::nt][4]) {
  constexpr int wpr = Cfg::block_k / 32;
  constexpr int a_words_row = Cfg::block_k / 16 * 4;  // one scale word per 16-byte piece
  const u8* const a = t.a_ring_tile(s);
  const u8* const as = t.a_scale_words(s);
  const u8* const raw = t.w_raw_tile(s);
  const u8* const ws = t.w_scale_words(s);
#pragma unroll
  for (int p = 0; p < wpr; ++p) {
    u32 b[Cfg::nt][2];
    float sw[Cfg::nt][2];
#pragma unroll
    for (int j = 0; j < Cfg::nt; ++j) {
      u32 const w = *reinterpret_cast<const u32*>(raw + w_off[j] + ((p ^ w_swz) << 4));
      e2m1x8_to_e4m3_scaled(w, b[j][0], b[j][1]);
      sw[j][0] = *reinterpret_cast<const float*>(ws + sw_off[j] + 4 * p);
      sw[j][1] = *reinterpret_cast<const float*>(ws + sw_off[j] + 4 * wpr + 4 * p);
    }
    int const piece = ((p ^ a_swz) << 5) + 8 * lane_t;
    // Even K positions of the 8 codes to the first k16 half, odd ones to the second, as
    // e2m1x8_to_e4m3_scaled splits the weights (select_halves is one prmt on CUDA).
#pragma unroll
    for (int i = 0; i < Cfg::mt; ++i) {
      u32x2 const lo = *reinterpret_cast<const u32x2*>(a + a_off[i] + piece);                       // row g
      u32x2 const hi = *reinterpret_cast<const u32x2*>(a + a_off[i] + 8 * Cfg::block_k + piece);    // row g + 8
      u32 const a0 = select_halves(lo.x, lo.y, 0x6420u), a2 = select_halves(lo.x, lo.y, 0x7531u);
      u32 const a1 = select_halves(hi.x, hi.y, 0x6420u), a3 = select_halves(hi.x, hi.y, 0x7531u);
      float const sa_lo = *reinterpret_cast<const float*>(as + sa_off[i] + 8 * p);
      float const sa_hi = *reinterpret_cast<const float*>(as + sa_off[i] + 8 * a_words_row + 8 * p);
#pragma unroll
      for (int j = 0; j < Cfg::nt; ++j) {
        float d[4];
        mma_m16n8k32_e4m3(d, a0, a1, a2, a3, b[j][0], b[j][1]);
        acc[i][j][0] = d[0] * (sa_lo * sw[j][0]) + acc[i][j][0];
        acc[i][j][1] = d[1] * (sa_lo * sw[j][1]) + acc[i][j][1];
        acc[i][j][2] = d[2] * (sa_hi * sw[j][0]) + acc[i][j][2];
        acc[i][j][3] = d[3] * (sa_hi * sw[j][1]) + acc[i][j][3];
      }
    }
  }
}

template <class Cfg>
MOETUNE_DEV void staged_fd_gemm_tile(const GemmArgs& g, u8* smem) {
  constexpr int wpr = Cfg::block_k / 32;
  constexpr int rb = 2 * Cfg::block_k;
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;  // one warp row: the warp index is its column
  int const lane_g = lane >> 2, lane_t = lane & 3;

  float acc[Cfg::mt][Cfg::nt][4];
  staged_zero<Cfg>(acc);
  StagedTiles<Cfg> const t{smem};
  StagedSources<Cfg> const src(g, tid);
  int const tiles = staged_k_tiles<Cfg>(g);
  // This lane's A rows (i * 16 + g, and + 8: same parity, same swizzle) and weight rows
  // (fragment j: (warp * nt + j) * 8 + g; the piece swizzle depends on g alone).
  // a8w4: rows of block_k fp8 codes and block_k / 16 scale words; the lane's weight scales are
  // those of its accumulators' columns, rows 2t and 2t + 1 of each fragment.
  int a_off[Cfg::mt], sa_off[Cfg::mt];
#pragma unroll
  for (int i = 0; i < Cfg::mt; ++i) {
    a_off[i] = (i * 16 + lane_g) * (Cfg::a_fp8 ? Cfg::block_k : rb);
    sa_off[i] = (i * 16 + lane_g) * (Cfg::block_k / 16) * 4;
  }
  int const a_swz = Cfg::a_fp8 ? staged_fd8_a_swizzle<Cfg>(lane_g) : (lane_g & 1) << 2;
  int w_off[Cfg::nt], f_off[Cfg::nt];
#pragma unroll
  for (int j = 0; j < Cfg::nt; ++j) {
    int const v = (warp * Cfg::nt + j) * 8 + lane_g;
    w_off[j] = v * wpr * 16 + 4 * lane_t;
    f_off[j] = (Cfg::a_fp8 ? (warp * Cfg::nt + j) * 8 + 2 * lane_t : v) * wpr * 4;
  }
  int const w_swz = staged_fd_piece_swizzle<Cfg>(lane_g);

  // Prologue: stages-1 tiles in flight, one commit group per slot, empty or not.
#pragma unroll
  for (int s = 0; s < Cfg::stages - 1; ++s) {
    if (s < tiles) issue_staged_tile<Cfg>(g, t, s, src, tid, g.k_begin + s * Cfg::block_k);
    copy_commit();
  }
  for (int kt = 0; kt < tiles; ++kt) {
    // Tile kt has landed (this thread's copies); its factors are made here; after the barrier
    // the whole tile is visible and every reader of tile kt-1's slot is done, so it is refilled.
    copy_wait<Cfg::stages - 2>();
    int const s = kt % Cfg::stages;
    int const k0 = g.k_begin + kt * Cfg::block_k;
    bool exact_tile = false;
    if constexpr (Cfg::a_fp8) {
      staged_fd8_scales<Cfg>(t, s, src, tid, k0);
      barrier();
    } else {
      exact_tile = barrier_any(staged_fd_factors<Cfg>(g, t, s, src, tid, k0));
    }
    int const ahead = kt + Cfg::stages - 1;
    if (ahead < tiles) issue_staged_tile<Cfg>(g, t, ahead % Cfg::stages, src, tid, g.k_begin + ahead * Cfg::block_k);
    copy_commit();
    if constexpr (Cfg::a_fp8) staged_fd8_step<Cfg>(t, s, a_off, sa_off, a_swz, w_off, f_off, w_swz, lane_t, acc);
    else if (exact_tile) staged_fd_step<Cfg, true>(t, s, a_off, a_swz, w_off, f_off, w_swz, lane_t, acc);
    else staged_fd_step<Cfg, false>(t, s, a_off, a_swz, w_off, f_off, w_swz, lane_t, acc);
  }
  copy_wait<0>();
  if constexpr (Cfg::a_fp8) {
    // Undo the fp8 weight codes' 2^-6 (a power of two: exact).
#pragma unroll
    for (int i = 0; i < Cfg::mt; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::nt; ++j)
#pragma unroll
        for (int a = 0; a < 4; ++a) acc[i][j][a] *= 64.0f;
  }

  store_accumulators<Cfg, path_sm80>(smem, acc, lane, 0, warp);
}

#else
// Other targets: the rules (fragment_decode_rules) never select this loop there; the stub
// keeps the dispatch in moe_stage1/2.cuh compiling.
template <class Cfg>
MOETUNE_DEV void staged_fd_gemm_tile(const GemmArgs&, u8*) {
  static_assert(Cfg::stage == 0, "fragment decode is an sm_90 main loop");
}
#endif  // MOETUNE_SM80_PLUS

}  // namespace moetune
