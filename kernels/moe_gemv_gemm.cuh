#pragma once
// The register-GEMV main loop ("gemv", sm_90 mma.sync): the decode sizes' loop.
//
// Why: at 1-8 tokens per sorted block the other loops spend their time in chains, not bytes:
// a cp.async ring per CTA with a barrier per k-tile, a decode feeding one wgmma group at a
// time. Session 40's probe (results/sm_90/2026-12-07-s40, gemv_probe.cu) streamed stage one's
// weights at 2.7-3.0 TB/s on an H100 in this form where the default's wgmma stage one took 13.6
// us for the same 20.9 MB at backbone M = 1.
//
// The CTA owns one 16-row weight fragment of the wgmma tile layout (autotune/moe/
// mxfp4_wgmma_tiles.hpp: stage one 8 h columns, gate rows then up rows; stage two 16 rows of
// y), so block_n is 8 (stage one) or 16 (stage two), and its warps split K: warp w takes the
// k-tiles w, w + warps, ... of block_k each. Per k-tile a lane loads every 16-byte piece and
// scale word of its k-tile into registers at once (block_k / 64 of each; no shared-memory ring,
// no barrier in the loop), then per 64-K piece decodes its four wgmma words into mma.sync
// m16n8k16 A fragments (a lane's piece of the tile layout is exactly the A registers of four
// k16 steps: moe_wgmma_gemm.cuh's decode) and multiplies them by the block's tokens as B, up to
// 8 tokens per mma (block_m 8 or 16: one or two token groups sharing each decoded A). B comes
// straight from the activation rows: lane (g, q) reads token g's bf16 pairs at K0 + 2q and K0 +
// 8 + 2q of each k16 step (stage one through L1, x being read by every column tile; stage two
// through L2, h having been written by stage one while this grid may already run). The warps'
// partial sums meet once in shared memory, added in warp order (deterministic), and leave the
// C tile as the other loops do, so both stages' epilogues serve this loop unchanged.
// Stage two waits for stage one (wait_for_previous_kernel) here, once the first k-tile's
// weights are in flight: they depend on no kernel, so their loads overlap stage one's tail
// (session 40's probe: its stage two loaded every weight before its wait).
// A16W4 only. The fast decode (one bf16x2 multiply per pair) takes scale bytes 2..127; a warp
// whose k-tile holds any other byte takes the exact decode for that k-tile (the choice made
// once per k-tile from the scale words already in registers: no second pass over the scales).
#include "moe_gemm.cuh"
#include "moe_wgmma_gemm.cuh"

namespace moetune {

#if defined(MOETUNE_SM90A)

// 16 bytes of weights, streamed past L1 (each is read once per CTA). volatile: the loads keep
// their order before the (volatile) mmas, so a lane's whole k-tile is in flight before its
// first piece is used (plain loads let ptxas sink them next to their use; session 40's probe).
MOETUNE_DEV u32x4 load_streaming_u32x4(const u8* p) {
  u32x4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
MOETUNE_DEV u32 load_streaming_u32(const u8* p) {
  u32 v;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

// A token's bf16 pair: stage one's x through L1 (read-only for the whole MoE), stage two's h
// through L2 only (stage one wrote it; an L1 line left by the MoE before would be stale).
template <int Stage>
MOETUNE_DEV u32 load_token_pair(const u8* p) {
  u32 v;
  if constexpr (Stage == 1) asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
  else asm("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// One k-tile of a warp: `steps` 64-K pieces (the rest of raw / sw is padding) multiplied into
// acc. tok[i]: this lane's token row of group i at the k-tile's first K (plus 4q bytes), or
// null for a padding token (its B is zero; a padding column is never stored anyway).
template <class Cfg, bool Exact>
MOETUNE_DEV void gemv_multiply(const u32x4 (&raw)[Cfg::block_k / 64], const u32 (&sw)[Cfg::block_k / 64], int steps,
                               const u8* const (&tok)[Cfg::block_m / 8], float (&acc)[Cfg::block_m / 8][4]) {
#pragma unroll
  for (int kb = 0; kb < Cfg::block_k / 64; ++kb) {
    if (kb >= steps) break;
    u32 a[4][4];
    wgmma_decode_a16w4<Exact>(raw[kb], sw[kb], a);
#pragma unroll
    for (int i = 0; i < Cfg::block_m / 8; ++i) {
#pragma unroll
      for (int st = 0; st < 4; ++st) {
        // K0 = 64 kb + 16 st: b0 at K0 + 2q, b1 at K0 + 8 + 2q (bytes: 2 x K).
        int const at = 2 * (64 * kb + 16 * st);
        u32 const b0 = tok[i] != nullptr ? load_token_pair<Cfg::stage>(tok[i] + at) : 0u;
        u32 const b1 = tok[i] != nullptr ? load_token_pair<Cfg::stage>(tok[i] + at + 16) : 0u;
        mma_m16n8k16_bf16(acc[i], a[st][0], a[st][1], a[st][2], a[st][3], b0, b1);
      }
    }
  }
}

template <class Cfg>
MOETUNE_DEV void gemv_gemm_tile(const GemmArgs& g, u8* smem) {
  constexpr int pieces = Cfg::block_k / 64;  // 64-K pieces per k-tile
  constexpr int groups = Cfg::block_m / 8;   // token groups (the mma's N is 8)
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  int const g8 = lane >> 2, q = lane & 3;

  // The CTA's fragment: stage one counts 8 h columns per fragment, stage two 16 rows of y.
  int const frag = Cfg::stage == 1 ? g.n0 / 8 : g.n0 / 16;
  bool const frag_ok = Cfg::stage == 1 ? 8 * frag < g.I : 16 * frag < g.n_rows;
  u64 const kb_total = static_cast<u64>(g.K / 64);
  const u8* const w = g.w + (static_cast<u64>(frag) * kb_total * 32 + lane) * 16;
  const u8* const ws = g.w_scales + static_cast<u64>(frag) * kb_total * 32 + 4 * g8;
  u64 const row_bytes = static_cast<u64>(g.K) * 2;
  const u8* tok_row[groups];
#pragma unroll
  for (int i = 0; i < groups; ++i) {
    int const src = g.row_src[8 * i + g8];
    tok_row[i] = src >= 0 ? g.a + static_cast<u64>(src) * row_bytes + 4 * q : nullptr;
  }

  float acc[groups][4];
#pragma unroll
  for (int i = 0; i < groups; ++i)
#pragma unroll
    for (int x = 0; x < 4; ++x) acc[i][x] = 0.0f;

  int const tiles = (g.k_end - g.k_begin + Cfg::block_k - 1) / Cfg::block_k;
  for (int t = frag_ok ? warp : tiles; t < tiles; t += Cfg::warps) {
    int const k0 = g.k_begin + t * Cfg::block_k;
    int const room = (g.k_end - k0) / 64;  // K % 64 == 0: the rules
    int const steps = room < pieces ? room : pieces;
    u32x4 raw[pieces];
    u32 sw[pieces];
    u32 outside = 0;
#pragma unroll
    for (int kb = 0; kb < pieces; ++kb) {
      u64 const piece = static_cast<u64>(k0 / 64 + kb);
      raw[kb] = kb < steps ? load_streaming_u32x4(w + piece * 512) : u32x4{0, 0, 0, 0};
      sw[kb] = kb < steps ? load_streaming_u32(ws + piece * 32) : 0x7f7f7f7fu;
    }
    if (Cfg::stage == 2 && t == warp) wait_for_previous_kernel();  // h (stage one's) from here on
#pragma unroll
    for (int kb = 0; kb < pieces; ++kb) outside |= scale_bytes_outside_fast_range(sw[kb]);
    const u8* tok[groups];
#pragma unroll
    for (int i = 0; i < groups; ++i) tok[i] = tok_row[i] != nullptr ? tok_row[i] + 2 * static_cast<u64>(k0) : nullptr;
    // Real weights' scales lie far inside the fast range; the exact decode is the rare path.
    if (__any_sync(0xffffffffu, outside != 0u)) gemv_multiply<Cfg, true>(raw, sw, steps, tok, acc);
    else gemv_multiply<Cfg, false>(raw, sw, steps, tok, acc);
  }

  // Stage two: every thread has waited before the epilogue adds into stage one's cleared
  // accumulator (a warp without k-tiles has not yet; a second wait returns at once).
  if (Cfg::stage == 2) wait_for_previous_kernel();
  // The warps' partial sums: [warp][token][16 rows] after the C tile, then added in warp order.
  // Accumulator x of lane (g, q) in group i: weight row g (+8 for x >= 2), token 8i + 2q + (x & 1).
  float* const ct = reinterpret_cast<float*>(smem);
  float* const part = reinterpret_cast<float*>(smem + Cfg::gv_part_at);
#pragma unroll
  for (int i = 0; i < groups; ++i)
#pragma unroll
    for (int x = 0; x < 4; ++x)
      part[(warp * Cfg::block_m + 8 * i + 2 * q + (x & 1)) * 16 + g8 + (x >= 2 ? 8 : 0)] = acc[i][x];
  barrier();
  // Stage one's C columns interleave gate (even) and up (odd) per h column (the epilogue's
  // order): fragment row r < 8 is gate of column r, r >= 8 up of column r - 8.
  for (int it = tid; it < Cfg::block_m * 16; it += Cfg::threads) {
    int const token = it / 16, row = it % 16;
    float sum = 0.0f;
#pragma unroll 4
    for (int wp = 0; wp < Cfg::warps; ++wp) sum += part[(wp * Cfg::block_m + token) * 16 + row];
    int const col = Cfg::stage == 1 ? 2 * (row & 7) + (row >> 3) : row;
    ct[token * Cfg::c_stride + col] = sum;
  }
  barrier();
}

#else
// Other targets: the rules never select this loop there; the stub keeps the dispatch compiling.
template <class Cfg>
MOETUNE_DEV void gemv_gemm_tile(const GemmArgs&, u8*) {
  static_assert(Cfg::stage == 0, "the gemv main loop is an sm_90 main loop");
}
#endif  // MOETUNE_SM90A

}  // namespace moetune
