#pragma once
// The grouped GEMM on Hopper's warpgroup MMA (the "wgmma" main loop, sm_90a).
//
// Why: the mma.sync kernels issue the weight decode, the copies and the MMAs from the same
// warps and wait on each; Nsight Compute put the fragment-decode stage one at 71 % issue-active
// with DRAM at 39 % (results/sm_90/2026-12-01-h200-s8/probes/p1), and from ~100 tokens per
// expert mma.sync ran at 120-150 TFLOP/s. Here the weights are wgmma's A operand, decoded
// straight into the A registers, and the tokens its N side (8 to 128 per sorted block), read by
// the tensor cores from shared memory: the MMAs run asynchronously while the warp decodes the
// next 64 K, and one 64 x N x 16 instruction replaces 8 N/8 mma.sync.
//
// Operands:
//   * weights: the wgmma tile layout (autotune/moe/mxfp4_wgmma_tiles.hpp), prepared once at
//     load time: for each 16-row fragment and 64 K, lane l's 16 bytes are exactly its A
//     registers' 32 elements (a16w4: four wgmma words (moe/mxfp4_repack.hpp), one per k16
//     step, whose pairs 0..3 are a0..a3; a8w4: four natural words, two per k32 step, split into e4m3 codes), and the
//     scales of a fragment's 64 K are 8 words (lane g: rows g and g+8, both 32-K blocks). Warp w
//     of the CTA owns fragment w (16 weight rows), so a CTA holds 16 * warps rows: stage one's
//     fragment f is h columns 8f..8f+7, gate rows then up rows; stage two's is y rows 16f..;
//   * tokens: block_m gathered activation rows, K-major in 128-byte swizzled rows (bf16: 64 K,
//     fp8: 128 K per row), the layout a wgmma descriptor reads (wgmma_sm90.cuh).
// Each thread copies its own weight piece per 64 K and its share of the token rows through a
// cp.async ring of `stages` k-tiles; one barrier per k-tile publishes the token rows. A block
// is multiplied in token chunks (Cfg::wg_chunk tokens per wgmma), and chunks past its last
// token are skipped.
// A16W4 folds the MXFP4 scale into the decoded bf16 (one bf16x2 multiply per pair, scale
// bytes 2..127; a CTA whose fragments hold any other scale byte takes the exact decode, two
// bf16 multiplies per pair, found once per CTA). A8W4 multiplies e4m3 x e4m3 per 32 K into a
// scratch accumulator and adds
// it scaled by sa(token) * sw(row), as the fragment-decode fp8 loop does.
// On return the result is in LDS as fp32 C[block_m][c_stride] (after a barrier), as the other
// main loops leave it, so both stages' epilogues serve this loop too.
#include "moe_gemm.cuh"
#include "moe_swap_gemm.cuh"
#include "wgmma_sm90.cuh"

namespace moetune {

#if defined(MOETUNE_SM90A)

// The copy ring: `stages` token-row tiles (wg_b_stride apart, 1024-aligned, so the swizzle
// atoms are), then `stages` weight parts (wg_ws_stride apart): the weight pieces
// [warp][64-K step][lane][16 B], the weight scale words [warp][64-K step][8 x 4 B] and, a8w4,
// the tokens' scale bytes [token][block_k / 32] (moe_config.cuh says why the two are apart).
template <class Cfg>
struct WgmmaRing {
  static constexpr int w_region = Cfg::stages * Cfg::wg_b_stride;
  static constexpr int s_at = Cfg::wg_w_bytes;  // in a stage's weight part
  static constexpr int as_at = s_at + Cfg::wg_s_bytes;
  u8* base;    // generic pointer of the ring
  u32 shared;  // its shared-window address
  MOETUNE_DEV u8* b(int s) const { return base + s * Cfg::wg_b_stride; }
  MOETUNE_DEV u8* w(int s) const { return base + w_region + s * Cfg::wg_ws_stride; }
  MOETUNE_DEV u8* ws(int s) const { return w(s) + s_at; }
  MOETUNE_DEV u8* as(int s) const { return w(s) + as_at; }
  MOETUNE_DEV u32 b_shared(int s) const { return shared + static_cast<u32>(s * Cfg::wg_b_stride); }
  MOETUNE_DEV u32 w_shared(int s) const { return shared + static_cast<u32>(w_region + s * Cfg::wg_ws_stride); }
};

// A 16- or 4-byte cp.async to a shared-window address, the whole source copied.
template <int Bytes>
MOETUNE_DEV void copy_async_to(u32 dst, const u8* src) {
  static_assert(Bytes == 16 || Bytes == 4, "16-byte pieces or 4-byte scale words");
  if constexpr (Bytes == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src) : "memory");
}

// This thread's copies, resolved once per CTA so a k-tile only adds its K (Nsight Compute's
// per-instruction counts of the first version: the copies' address and range arithmetic was
// ~20 % of the instructions). A thread copies one 16-byte column c of the token rows (c = tid %
// pieces_row, the same in every row it copies: rows tid / pieces_row + i * row_step), keeping
// per row a 32-bit byte offset (the activations of one MoE are far below 4 GB) and its place in
// the stage. Nothing is copied (nor zero-filled) that no kept result reads: padding token rows
// (a D column is one token, and padding tokens' columns are never stored), the rows of a
// fragment past the matrix (their D rows are never stored), K past the range (those 64-K steps
// are skipped).
template <class Cfg>
struct WgmmaCopier {
  static constexpr int elem = Cfg::a_fp8 ? 1 : 2;              // bytes per activation
  static constexpr int pieces_row = Cfg::block_k * elem / 16;  // 16-byte pieces per token row
  static_assert(Cfg::threads % pieces_row == 0, "a thread copies one column of the token rows");
  static constexpr int row_step = Cfg::threads / pieces_row;
  static constexpr int b_per_thread = (Cfg::block_m + row_step - 1) / row_step;
  static constexpr u32 no_row = 0xffffffffu;
  static constexpr int as_words_row = Cfg::block_k / 128;  // a8w4: 4-byte scale words per row
  static constexpr int as_pieces = Cfg::a_fp8 ? Cfg::block_m * as_words_row : 0;
  static constexpr int as_per_thread = Cfg::a_fp8 ? (as_pieces + Cfg::threads - 1) / Cfg::threads : 0;
  u32 b_src[b_per_thread];  // byte offset of the piece in the activations at K = 0; no_row: nothing to copy
  u32 b_dst[b_per_thread];  // its offset in a stage's token rows
  int b_k;                  // K of the thread's column inside a k-tile
  int b_n0;                 // its first token row
  int tid;
  u32 as_src[as_per_thread > 0 ? as_per_thread : 1];
  u32 as_dst[as_per_thread > 0 ? as_per_thread : 1];
  int as_k[as_per_thread > 0 ? as_per_thread : 1];
  const u8* w;   // this lane's piece of its warp's fragment at K = 0
  const u8* ws;  // this lane's scale piece (lanes < 2 * wg_sub) at K = 0
  u32 w_dst, ws_dst;
  bool frag_ok;  // the warp's fragment lies inside the matrix

  MOETUNE_DEV WgmmaCopier(const GemmArgs& g, int tid_, int warp, int lane) : tid(tid_) {
    using R = WgmmaRing<Cfg>;
    u32 const a_row = static_cast<u32>(g.K) * elem;
    int const c = tid % pieces_row;
    b_k = c * 16 / elem;
    b_n0 = tid / pieces_row;
#pragma unroll
    for (int i = 0; i < b_per_thread; ++i) {
      int const n = tid / pieces_row + i * row_step;
      int const src = n < Cfg::block_m ? g.row_src[n] : -1;
      b_src[i] = src >= 0 ? static_cast<u32>(src) * a_row + static_cast<u32>(c) * 16u : no_row;
      b_dst[i] = static_cast<u32>((c >> 3) * (Cfg::block_m * 128) + n * 128 + (((c & 7) ^ (n & 7)) << 4));
    }
#pragma unroll
    for (int i = 0; i < as_per_thread; ++i) {
      int const p = tid + i * Cfg::threads;
      int const n = p / as_words_row, cw = p % as_words_row;
      int const src = p < as_pieces ? g.row_src[n] : -1;
      as_src[i] = src >= 0 ? static_cast<u32>(src) * static_cast<u32>(g.K / 32) + 4u * cw : no_row;
      as_dst[i] = static_cast<u32>(R::as_at + n * (Cfg::block_k / 32) + 4 * cw);  // in the weight part
      as_k[i] = 128 * cw;
    }
    // Fragment (global index) of this warp: stage one counts 8 h columns per fragment, stage
    // two 16 rows of y.
    int const frag = Cfg::stage == 1 ? g.n0 / 8 + warp : g.n0 / 16 + warp;
    frag_ok = Cfg::stage == 1 ? 8 * frag < g.I : 16 * frag < g.n_rows;
    u64 const kb_total = static_cast<u64>(g.K / 64);
    w = g.w + (static_cast<u64>(frag) * kb_total * 32 + lane) * 16;
    ws = g.w_scales + static_cast<u64>(frag) * kb_total * 32 + 16 * lane;
    w_dst = static_cast<u32>(warp * (Cfg::wg_sub * 512) + lane * 16);  // in the weight part
    ws_dst = static_cast<u32>(R::s_at + warp * (Cfg::wg_sub * 32) + lane * 16);
  }

  // Queues the copies of the k-tile starting at k0 into the stage whose token rows and weight
  // part start at shared addresses `stage` and `wstage`; Full: the whole k-tile lies inside
  // the K range (no range test).
  template <bool Full>
  MOETUNE_DEV void issue(const GemmArgs& g, u32 stage, u32 wstage, int lane, int k0) const {
    int const room = g.k_end - k0;
    u64 const ka = static_cast<u64>(k0) * elem;
    if (Full || b_k < room) {
#pragma unroll
      for (int i = 0; i < b_per_thread; ++i) {
        if (b_per_thread * row_step > Cfg::block_m && b_n0 + i * row_step >= Cfg::block_m) break;
        if (b_src[i] != no_row) copy_async_to<16>(stage + b_dst[i], g.a + b_src[i] + ka);
      }
    }
    if constexpr (Cfg::a_fp8) {
#pragma unroll
      for (int i = 0; i < as_per_thread; ++i) {
        if (as_per_thread * Cfg::threads > as_pieces && tid + i * Cfg::threads >= as_pieces) break;
        if (as_src[i] != no_row && (Full || as_k[i] < room)) copy_async_to<4>(wstage + as_dst[i], g.a_scales + as_src[i] + k0 / 32);
      }
    }
    if (!frag_ok) return;
    const u8* const wk = w + static_cast<u64>(k0 / 64) * 512;
#pragma unroll
    for (int kb = 0; kb < Cfg::wg_sub; ++kb)
      if (Full || 64 * kb < room) copy_async_to<16>(wstage + w_dst + kb * 512, wk + kb * 512);
    if (lane < 2 * Cfg::wg_sub && (Full || 64 * (lane >> 1) < room))
      copy_async_to<16>(wstage + ws_dst, ws + static_cast<u64>(k0 / 64) * 32);
  }
};

// The top bit of every byte of a scale word that lies outside the fast decode's range 2..127
// (a16w4), zero elsewhere. Per byte b: (b | 0x80) - 2 has its top bit set iff b >= 2 (b < 128)
// or b >= 130 (b >= 128); with b's own top bit that leaves 2..127.
MOETUNE_DEV u32 scale_bytes_outside_fast_range(u32 w) { return (~((w | 0x80808080u) - 0x02020202u) | w) & 0x80808080u; }

// Whether any scale byte of this warp's fragment in [k_begin, k_end) lies outside that range,
// read once per CTA from global memory (the scales are 1/16 of the codes and the ring reads
// them again from L2). (Tested per k-tile at the k-tile's barrier instead, this cost ~25
// instructions per k-tile.)
template <class Cfg>
MOETUNE_DEV bool wgmma_fragment_needs_exact_decode(const GemmArgs& g, const WgmmaCopier<Cfg>& src, int lane) {
  if (!src.frag_ok) return false;
  u32 bad = 0;
  // The fragment's scale stream: 32 bytes per 64-K step, two 16-byte pieces.
  const u8* const base = src.ws - 16 * lane;
  for (int p = 2 * (g.k_begin / 64) + lane; p < 2 * (g.k_end / 64); p += warp_size) {
    u32x4 const v = *reinterpret_cast<const u32x4*>(base + 16 * p);
    bad |= scale_bytes_outside_fast_range(v.x) | scale_bytes_outside_fast_range(v.y) |
           scale_bytes_outside_fast_range(v.z) | scale_bytes_outside_fast_range(v.w);
  }
  return bad != 0u;
}

// bf16x2 factor 2^(b-1) (both halves) for byte `Byte` of a scale word already offset by 126
// per byte: the byte to bits 0-7 and 16-23 (prmt, zeros elsewhere), then to the exponent field.
template <int Byte>
MOETUNE_DEV u32 wgmma_pair_factor(u32 biased) {
  u32 d;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(d) : "r"(biased), "n"(Byte | (4 << 4) | (Byte << 8) | (4 << 12)));
  return d << 7;
}

// bf16x2 of the e8m0 scale 2^(b-127) itself (both halves), for every byte: b << 7 is its bf16
// pattern for b = 1..254; b = 0 is the subnormal 2^-127 (0x0040) and b = 255 the NaN scale.
MOETUNE_DEV u32 wgmma_scale_bf16x2(u32 b) {
  u32 const h = b == 0u ? 0x0040u : b == 255u ? 0x7fc0u : b << 7;
  return h * 0x10001u;
}

// The four bf16x2 factors of a 64-K piece's scale word (bytes: row g block 0, row g+8 block
// 0, row g block 1, row g+8 block 1): fast, 2^(b-1) of bytes already inside 2..127; exact, the
// scale itself.
template <bool Exact>
MOETUNE_DEV void wgmma_a16w4_factors(u32 sw, u32 (&f)[4]) {
  if constexpr (!Exact) {
    u32 const t = sw + 0x7e7e7e7eu;  // no carries: every byte is <= 127 on this path
    f[0] = wgmma_pair_factor<0>(t), f[1] = wgmma_pair_factor<1>(t);
    f[2] = wgmma_pair_factor<2>(t), f[3] = wgmma_pair_factor<3>(t);
  } else {
#pragma unroll
    for (int b = 0; b < 4; ++b) f[b] = wgmma_scale_bf16x2((sw >> (8 * b)) & 0xffu);
  }
}

// k16 step `st` of a 64-K piece: its wgmma word -> its four A registers.
template <bool Exact>
MOETUNE_DEV void wgmma_a16w4_word(u32 word, int st, const u32 (&f)[4], u32 (&a)[4]) {
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    // pairs 0, 2: row g; 1, 3: row g+8; steps 0-1 read 32-K block 0, steps 2-3 block 1
    u32 const fp = f[(st < 2 ? 0 : 2) + (p & 1)];
    u32 const pattern = e2m1x2_wgmma_pattern(word, p);
    a[p] = Exact ? mul_bf16x2(mul_bf16x2(pattern, 0x7e807e80u), fp) : mul_bf16x2(pattern, fp);
  }
}

// A16W4: one 64-K piece (four wgmma words, one per k16 step) and its scale word -> the A
// registers of 4 steps.
// Fast (every byte 2..127): the pattern (value * 2^-126) times 2^(b-1), one multiply per pair.
// Exact (any byte): the pattern times 2^126 is the e2m1 value itself, then times the scale;
// both products are exact in bf16 (two significant bits), subnormals kept, so this matches the
// fp32 reference bit for bit at one multiply more per pair and few registers.
template <bool Exact>
MOETUNE_DEV void wgmma_decode_a16w4(const u32x4& raw, u32 sw, u32 (&a)[4][4]) {
  u32 f[4];
  wgmma_a16w4_factors<Exact>(sw, f);
  wgmma_a16w4_word<Exact>(raw.x, 0, f, a[0]);
  wgmma_a16w4_word<Exact>(raw.y, 1, f, a[1]);
  wgmma_a16w4_word<Exact>(raw.z, 2, f, a[2]);
  wgmma_a16w4_word<Exact>(raw.w, 3, f, a[3]);
}

// Shared-window loads at a 32-bit address. The main loop keeps each lane's read addresses in
// registers (one per ring stream) and adds the stage and step as constants: read through
// generic pointers, the compiler sank their computation (from the thread index) into every
// 64-K step, ~12 instructions a step (Nsight Compute, results/sm_90/2026-12-02-h200-s13/p1).
// volatile: a stage's address recurs every `stages` k-tiles and must be read anew each time.
MOETUNE_DEV u32x4 load_shared_u32x4(u32 addr) {
  u32x4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}
MOETUNE_DEV u32 load_shared_u32(u32 addr) {
  u32 v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}

// The wgmmas of k16 step `k16` of the k-tile's 64-K step `kb`: one per token chunk holding
// tokens, A from `ab` (that step's four registers), B from the stage's token rows at desc0.
template <class Cfg, int Chunks>
MOETUNE_DEV void wgmma_a16w4_mma(const u32 (&ab)[4], u64 desc0, int kb, int k16,
                                 float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
#pragma unroll
  for (int c = 0; c < Chunks; ++c) {
    u64 const desc = desc0 + static_cast<u64>((kb * Cfg::block_m * 128 + c * Cfg::wg_chunk * 128 + k16 * 32) >> 4);
    WgmmaBf16<Cfg::wg_chunk>::mma(acc[c], ab[0], ab[1], ab[2], ab[3], desc, 1);
  }
}

// One a16w4 k-tile: per 64-K step, decode into the A buffer the step before last used (its
// wgmma group is complete: wait_group 1 below), fence, four k16 steps of wgmmas (one per token
// chunk holding tokens: Chunks of them), commit. `w_at` / `s_at`: this lane's weight piece and
// scale word of the stage's first step; `desc0`: the stage's token rows. Full: every step of
// the k-tile lies inside the K range (no per-step test; only a CTA's last k-tile can be
// partial). Exact: the CTA's fragments hold a scale the fast decode cannot take; the decode
// is chosen once per CTA, outside the loop (a run-time choice per step cost a branch and its
// reconvergence there, ~4 instructions a step).
template <class Cfg, int Chunks, bool Exact, bool Full>
MOETUNE_DEV void wgmma_a16w4_tile(u32 w_at, u32 s_at, u64 desc0, int steps, u32 (&a)[2][4][4],
                                  float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
#pragma unroll
  for (int kb = 0; kb < Cfg::wg_sub; ++kb) {
    if (Full || kb < steps) {
      u32x4 const raw = load_shared_u32x4(w_at + kb * 512);
      u32 const sw = load_shared_u32(s_at + kb * 32);
      u32(&ab)[4][4] = a[kb & 1];
      wgmma_decode_a16w4<Exact>(raw, sw, ab);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) wgmma_fence_operand(ab[i][j]);
      wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < 4; ++k16) wgmma_a16w4_mma<Cfg, Chunks>(ab[k16], desc0, kb, k16, acc);
      wgmma_commit();
      wgmma_wait<1>();
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) wgmma_fence_operand(a[(kb + 1) & 1][i][j]);
    }
  }
}

// The same k-tile decoded `Group` k16 steps at a time: per group the group's wgmma words into
// one of two A buffers of 4 x Group registers (buffer b: a[Group * b] .. a[Group * b + Group -
// 1]), one fence, the group's wgmmas, one commit, then wait_group 1 before the other buffer is
// rewritten.
// Group 1, the k16 decode (Cfg::wg_k16; session 18): 8 A registers live instead of the 64-K
// form's 32. Why: ptxas needs registers for the A operands of every wgmma in flight, and where
// the launch bound leaves too few for the 64-K form it serialises every wgmma of the kernel
// (C7511 / C7512: each HGMMA waited for before the next, no decode under the MMAs) -- the
// default stage two at 8 and 16 tokens (53-55 registers) and the 8-token two-warpgroup stage
// one (48). In this form all of them stay asynchronous at 48-62 registers. Where the 64-K form
// is not serialised it stays ahead: one fence and one wait per 64-K step instead of four
// (results/sm_90/2026-12-04-h200-s18/p3).
// Group 2, the k32 decode (Cfg::wg_k32; session 25, not measured yet): two fences, commits and
// waits per 64-K step and eight bf16x2 chains between waits, at 8 A registers more than k16.
// Compiled (no GPU), the kernels of the 8- and 16-token k16 defaults take it at 58-64
// registers (k16: 48-53) with their wgmmas asynchronous; the 64-token pair under its launch
// bound of 3 does not (ptxas serialises it, C7512; its register estimate prunes it).
template <class Cfg, int Chunks, bool Exact, bool Full, int Group>
MOETUNE_DEV void wgmma_a16w4_tile_grouped(u32 w_at, u32 s_at, u64 desc0, int steps, u32 (&a)[4][4],
                                          float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  static_assert(Group == 1 || Group == 2, "one or two k16 steps per commit group");
#pragma unroll
  for (int kb = 0; kb < Cfg::wg_sub; ++kb) {
    if (Full || kb < steps) {
      u32x4 const raw = load_shared_u32x4(w_at + kb * 512);
      u32 f[4];
      wgmma_a16w4_factors<Exact>(load_shared_u32(s_at + kb * 32), f);
      u32 const words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
      for (int grp = 0; grp < 4 / Group; ++grp) {
        int const buffer = Group * (grp & 1), other = Group * ((grp + 1) & 1);
#pragma unroll
        for (int i = 0; i < Group; ++i) wgmma_a16w4_word<Exact>(words[Group * grp + i], Group * grp + i, f, a[buffer + i]);
#pragma unroll
        for (int i = 0; i < Group; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) wgmma_fence_operand(a[buffer + i][j]);
        wgmma_fence();
#pragma unroll
        for (int i = 0; i < Group; ++i) wgmma_a16w4_mma<Cfg, Chunks>(a[buffer + i], desc0, kb, Group * grp + i, acc);
        wgmma_commit();
        wgmma_wait<1>();
        // The other buffer's group is complete: its registers are free from here.
#pragma unroll
        for (int i = 0; i < Group; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) wgmma_fence_operand(a[other + i][j]);
      }
    }
  }
}

// A8W4: the scratch sums of k32 step `step` of stage s, scaled by sw(row) * sa(token), into acc.
template <class Cfg, int Chunks>
MOETUNE_DEV void wgmma_a8w4_apply(const WgmmaRing<Cfg>& r, int s, int step, int warp, int lane,
                                  const float (&part)[Cfg::wg_chunks][Cfg::wg_chunk / 2],
                                  float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  int const g = lane >> 2, q = lane & 3;
  u32 const sw = *reinterpret_cast<const u32*>(r.ws(s) + warp * (Cfg::wg_sub * 32) + (step >> 1) * 32 + g * 4);
  int const sh = 16 * (step & 1);
  float const swg = e8m0_to_f32((sw >> sh) & 0xffu), swg8 = e8m0_to_f32((sw >> (sh + 8)) & 0xffu);
  const u8* const as = r.as(s) + step;
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
#pragma unroll
    for (int j = 0; j < Cfg::wg_chunk / 8; ++j) {
      int const t0 = c * Cfg::wg_chunk + 8 * j + 2 * q;
      float const sa0 = e8m0_to_f32(as[t0 * (Cfg::block_k / 32)]);
      float const sa1 = e8m0_to_f32(as[(t0 + 1) * (Cfg::block_k / 32)]);
      float const f[4] = {swg * sa0, swg * sa1, swg8 * sa0, swg8 * sa1};
#pragma unroll
      for (int h = 0; h < 4; ++h) acc[c][4 * j + h] = part[c][4 * j + h] * f[h] + acc[c][4 * j + h];
    }
}

// One a8w4 k-tile from stage s (always whole: the rules ask K to be a multiple of block_k).
// Per k32 step i: e4m3 codes into A buffer i % 2, one wgmma per token chunk into scratch sums
// i % 2 (D = A * B), commit, wait until only they run, then scale step i - 1's sums into acc;
// the k-tile's last step is waited for and added at its end. (Carried into the next k-tile
// instead, its read there made ptxas serialise every wgmma of the loop, C7513: its wait-count
// analysis does not follow the back edge.)
template <class Cfg, int Chunks>
MOETUNE_DEV void wgmma_a8w4_tile(const WgmmaRing<Cfg>& r, int s, int warp, int lane, u32 (&a)[2][4],
                                 float (&part)[2][Cfg::wg_chunks][Cfg::wg_chunk / 2],
                                 float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  constexpr int steps = Cfg::block_k / 32;
  const u8* const wt = r.w(s) + warp * (Cfg::wg_sub * 512) + lane * 16;
  u64 const desc0 = wgmma_desc_sw128(r.b_shared(s));
#pragma unroll
  for (int kb = 0; kb < Cfg::wg_sub; ++kb) {
    u32x4 const raw = *reinterpret_cast<const u32x4*>(wt + kb * 512);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      int const i = 2 * kb + j;
      u32(&ab)[4] = a[i & 1];
      e2m1x8_to_e4m3_scaled(j == 0 ? raw.x : raw.z, ab[0], ab[2]);  // row g: k 4q.. and 16+4q..
      e2m1x8_to_e4m3_scaled(j == 0 ? raw.y : raw.w, ab[1], ab[3]);  // row g+8
#pragma unroll
      for (int x = 0; x < 4; ++x) wgmma_fence_operand(ab[x]);
      wgmma_fence();
#pragma unroll
      for (int c = 0; c < Chunks; ++c) {
        u64 const desc = desc0 + static_cast<u64>(((i >> 2) * Cfg::block_m * 128 + c * Cfg::wg_chunk * 128 + (i & 3) * 32) >> 4);
        WgmmaE4m3<Cfg::wg_chunk>::mma(part[i & 1][c], ab[0], ab[1], ab[2], ab[3], desc, 0);
      }
      wgmma_commit();
      wgmma_wait<1>();
      // The group of step i - 1 is done: its A registers live until here (a register the
      // compiler reused while that group ran would serialise the pipeline). Its scratch sums
      // are read below only after the scale loads, which the wait's memory clobber orders.
#pragma unroll
      for (int x = 0; x < 4; ++x) wgmma_fence_operand(a[(i + 1) & 1][x]);
      if (i > 0) wgmma_a8w4_apply<Cfg, Chunks>(r, s, i - 1, warp, lane, part[(i + 1) & 1], acc);
    }
  }
  wgmma_wait<0>();
#pragma unroll
  for (int x = 0; x < 4; ++x) wgmma_fence_operand(a[(steps - 1) & 1][x]);
  wgmma_a8w4_apply<Cfg, Chunks>(r, s, steps - 1, warp, lane, part[(steps - 1) & 1], acc);
}

// Queues the copies of k-tile t into its stage (t % stages); the range test only for a
// k-tile that reaches past the K range.
template <class Cfg>
MOETUNE_DEV void wgmma_issue_tile(const GemmArgs& g, const WgmmaRing<Cfg>& r, const WgmmaCopier<Cfg>& src, int lane,
                                  int t) {
  int const k0 = g.k_begin + t * Cfg::block_k;
  int const s = t % Cfg::stages;
  if (k0 + Cfg::block_k <= g.k_end) src.template issue<true>(g, r.b_shared(s), r.w_shared(s), lane, k0);
  else src.template issue<false>(g, r.b_shared(s), r.w_shared(s), lane, k0);
}

// The start of k-tile kt in both k loops: wait for its copies, publish them, queue the copies
// stages-2 tiles ahead (a stage is refilled two k-tiles after it was read).
template <class Cfg>
MOETUNE_DEV void wgmma_k_tile_start(const GemmArgs& g, const WgmmaRing<Cfg>& r, const WgmmaCopier<Cfg>& src, int lane,
                                    int kt, int tiles) {
  copy_wait<Cfg::stages - 3>();  // this thread's copies of tile kt have landed
  fence_proxy_async_shared();    // the tensor cores read the token rows through the async proxy
  barrier();                     // every thread's copies of tile kt are visible; readers of kt-2 done
  if (kt + Cfg::stages - 2 < tiles) wgmma_issue_tile<Cfg>(g, r, src, lane, kt + Cfg::stages - 2);
  copy_commit();
}

// The stage's token-row descriptor, the same in every lane, as a value ptxas knows is the same:
// its low word broadcast from lane 0 and the constant high word (wgmma_desc_from_low). Why: in
// the 64-K form ptxas kept the stage's descriptor, which follows the k-tile counter, in vector
// registers and per wgmma added the offset with a 64-bit add and moved both words into the
// uniform registers the HGMMA reads: 6.2 instructions per wgmma (Nsight Compute's SASS page of
// the 16-token default stage one, results/sm_90/2026-12-07-s37), where the decoded word itself
// costs 15.7. Broadcast, the sums stay in uniform registers, one UIADD3.64 per wgmma as in the
// k16 form: that stage one's 16-wgmma k-tile body compiles to 225 instructions instead of 296,
// and it runs 5 % faster (H100, session 38: backbone M = 512 510.7 / 507.4 -> 483.9 / 483.8 us,
// draft 189.7 / 189.6 -> 180.4 / 179.7; results/sm_90/2026-12-07-s38). Every kernel in this form
// takes it, the decode sizes' one-warpgroup 8-token stage one and unbounded stage two too
// (backbone M = 1 whole MoE 27.0 -> 25.8 us on the H100, session 39).
MOETUNE_DEV u64 warp_uniform_desc(u64 desc) {
  return wgmma_desc_from_low(__shfl_sync(0xffffffffu, static_cast<u32>(desc), 0));
}

// K-tile kt of the a16w4 k loop: its start, then its multiply. Full: the k-tile lies wholly
// inside the K range (instantiated for both, so the whole k-tiles test nothing per step).
// `w_read` / `s_read`: this lane's weight piece and scale word in stage 0 (stage s adds s *
// wg_ws_stride); `desc_ring`: the descriptor of stage 0's token rows (s * wg_b_stride).
template <class Cfg, int Chunks, bool Exact, bool Full>
MOETUNE_DEV void wgmma_a16w4_k_tile(const GemmArgs& g, const WgmmaRing<Cfg>& r, const WgmmaCopier<Cfg>& src, int lane,
                                    int kt, int tiles, u32 w_read, u32 s_read, u64 desc_ring, u32 (&a)[2][4][4],
                                    float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  int const s = kt % Cfg::stages;
  // The stage's offsets in the ring's token-row tiles and in its weight parts.
  u32 const b_off = static_cast<u32>(s * Cfg::wg_b_stride), w_off = static_cast<u32>(s * Cfg::wg_ws_stride);
  wgmma_k_tile_start<Cfg>(g, r, src, lane, kt, tiles);
  int const steps = Full ? Cfg::wg_sub : (g.k_end - (g.k_begin + kt * Cfg::block_k)) / 64;  // K % 64 == 0: the rules
  if constexpr (Cfg::wg_k16 || Cfg::wg_k32)
    wgmma_a16w4_tile_grouped<Cfg, Chunks, Exact, Full, Cfg::wg_k32 ? 2 : 1>(w_read + w_off, s_read + w_off,
                                                                          desc_ring + (b_off >> 4), steps, a[0], acc);
  else
    wgmma_a16w4_tile<Cfg, Chunks, Exact, Full>(w_read + w_off, s_read + w_off, warp_uniform_desc(desc_ring + (b_off >> 4)),
                                               steps, a, acc);
}

// The a16w4 k loop for a block whose tokens fill `Chunks` token chunks; acc is zero on entry.
// Exact: the CTA's fragments hold a scale the fast decode cannot take. Each lane's LDS read
// addresses and the ring's token-row descriptor are computed once; the whole k-tiles test
// nothing per step, the last, partial one is separate.
// Not unrolled by the ring's length: with every k-tile's stage a compile-time constant
// (session 13) ptxas needed half the registers and ~7 % fewer instructions per wgmma in stage
// one, but the 64-token 8-warp pair then wrote NaN into whole column tiles of h at M = 8
// (reproducibly: the same 18432 elements in sessions 13 and 14) while this form passes every
// gate; results/sm_90/2026-12-03-h200-s14/p1.
template <class Cfg, int Chunks, bool Exact>
MOETUNE_DEV void wgmma_a16w4_k_loop(const GemmArgs& g, const WgmmaRing<Cfg>& r, const WgmmaCopier<Cfg>& src, int warp,
                                    int lane, float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  using R = WgmmaRing<Cfg>;
  int const tiles = (g.k_end - g.k_begin + Cfg::block_k - 1) / Cfg::block_k;
  int const full_tiles = (g.k_end - g.k_begin) / Cfg::block_k;
  u32 a[2][4][4];  // A registers of two 64-K steps (the k16 form: a[0][0] and a[0][1]; k32: a[0])
  // This lane's reads in stage 0 (stage s adds s * wg_ws_stride), computed once.
  u32 const w_read = r.w_shared(0) + static_cast<u32>(warp * (Cfg::wg_sub * 512) + lane * 16);
  u32 const s_read = r.w_shared(0) + static_cast<u32>(R::s_at + warp * (Cfg::wg_sub * 32) + (lane >> 2) * 4);
  u64 const desc_ring = wgmma_desc_sw128(r.shared);

  // Prologue: stages-2 tiles in flight (one commit group per slot, empty or not). A stage is
  // refilled two k-tiles after it was read: the last wgmma group of a k-tile may still run
  // while the next k-tile starts. Every copy range-tested here (the form measured in session
  // 14; wgmma_issue_tile, as the a8w4 loop's prologue, changes every a16w4 kernel's code).
#pragma unroll
  for (int t = 0; t < Cfg::stages - 2; ++t) {
    if (t < tiles) src.template issue<false>(g, r.b_shared(t), r.w_shared(t), lane, g.k_begin + t * Cfg::block_k);
    copy_commit();
  }
  for (int kt = 0; kt < full_tiles; ++kt)
    wgmma_a16w4_k_tile<Cfg, Chunks, Exact, true>(g, r, src, lane, kt, tiles, w_read, s_read, desc_ring, a, acc);
  if (full_tiles < tiles)
    wgmma_a16w4_k_tile<Cfg, Chunks, Exact, false>(g, r, src, lane, full_tiles, tiles, w_read, s_read, desc_ring, a, acc);
  wgmma_wait<0>();
#pragma unroll
  for (int c = 0; c < Cfg::wg_chunks; ++c)
#pragma unroll
    for (int x = 0; x < Cfg::wg_chunk / 2; ++x) wgmma_fence_operand(acc[c][x]);
}

// The a8w4 k loop (whole k-tiles: the rules) as sessions 10-12 measured it (its machine code
// is byte for byte theirs). Session 14's a16w4 changes (the k loop above, the launch bound)
// applied to it made it slower (backbone M = 8 / 64 105.2 / 455.0 -> 119.2 / 515.5 us, stage
// one 67 -> 79 at M = 8: results/sm_90/2026-12-03-h200-s14/p4), so they are not.
template <class Cfg, int Chunks>
MOETUNE_DEV void wgmma_a8w4_k_loop(const GemmArgs& g, const WgmmaRing<Cfg>& r, const WgmmaCopier<Cfg>& src, int warp,
                                   int lane, float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  int const tiles = (g.k_end - g.k_begin + Cfg::block_k - 1) / Cfg::block_k;
  u32 a8[2][4];                                      // A registers of two k32 steps
  float part[2][Cfg::wg_chunks][Cfg::wg_chunk / 2];  // two sets of scratch sums
#pragma unroll
  for (int b = 0; b < 2; ++b)
#pragma unroll
    for (int c = 0; c < Cfg::wg_chunks; ++c)
#pragma unroll
      for (int i = 0; i < Cfg::wg_chunk / 2; ++i) part[b][c][i] = 0.0f;
  // Prologue: stages-2 tiles in flight, as in the a16w4 loop.
#pragma unroll
  for (int t = 0; t < Cfg::stages - 2; ++t) {
    if (t < tiles) wgmma_issue_tile<Cfg>(g, r, src, lane, t);
    copy_commit();
  }
  for (int kt = 0; kt < tiles; ++kt) {
    int const s = kt % Cfg::stages;
    wgmma_k_tile_start<Cfg>(g, r, src, lane, kt, tiles);
    wgmma_a8w4_tile<Cfg, Chunks>(r, s, warp, lane, a8, part, acc);
  }
  wgmma_wait<0>();
#pragma unroll
  for (int c = 0; c < Cfg::wg_chunks; ++c)
#pragma unroll
    for (int x = 0; x < Cfg::wg_chunk / 2; ++x) wgmma_fence_operand(acc[c][x]);
}

// The k loop for `Chunks` token chunks.
template <class Cfg, int Chunks, bool Exact>
MOETUNE_DEV void wgmma_k_loop(const GemmArgs& g, const WgmmaRing<Cfg>& r, const WgmmaCopier<Cfg>& src, int warp,
                              int lane, float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  if constexpr (Cfg::a_fp8) wgmma_a8w4_k_loop<Cfg, Chunks>(g, r, src, warp, lane, acc);
  else wgmma_a16w4_k_loop<Cfg, Chunks, Exact>(g, r, src, warp, lane, acc);
}

// The k loop for the block's token count (a wgmma under a run-time test inside the loop would
// cost a branch per step; the count is the same for the whole CTA).
template <class Cfg, bool Exact>
MOETUNE_DEV void wgmma_k_loop_for_chunks(int chunks, const GemmArgs& g, const WgmmaRing<Cfg>& r,
                                         const WgmmaCopier<Cfg>& src, int warp, int lane,
                                         float (&acc)[Cfg::wg_chunks][Cfg::wg_chunk / 2]) {
  if constexpr (Cfg::wg_chunks == 4) {
    if (chunks <= 1) wgmma_k_loop<Cfg, 1, Exact>(g, r, src, warp, lane, acc);
    else if (chunks == 2) wgmma_k_loop<Cfg, 2, Exact>(g, r, src, warp, lane, acc);
    else if (chunks == 3) wgmma_k_loop<Cfg, 3, Exact>(g, r, src, warp, lane, acc);
    else wgmma_k_loop<Cfg, 4, Exact>(g, r, src, warp, lane, acc);
  } else if constexpr (Cfg::wg_chunks == 2) {
    if (chunks <= 1) wgmma_k_loop<Cfg, 1, Exact>(g, r, src, warp, lane, acc);
    else wgmma_k_loop<Cfg, 2, Exact>(g, r, src, warp, lane, acc);
  } else {
    static_assert(Cfg::wg_chunks == 1, "1, 2 or 4 token chunks");
    (void)chunks;
    wgmma_k_loop<Cfg, 1, Exact>(g, r, src, warp, lane, acc);
  }
}

template <class Cfg>
MOETUNE_DEV void wgmma_gemm_tile(const GemmArgs& g, u8* smem) {
  int const tid = static_cast<int>(thread_x());
  int const lane = static_cast<int>(lane_id());
  int const warp = tid / warp_size;
  // The ring starts at the first 1024-aligned shared address (moe_config.cuh keeps 1 KB spare).
  u32 const smem_shared = static_cast<u32>(__cvta_generic_to_shared(smem));
  u32 const pad = (1024u - (smem_shared & 1023u)) & 1023u;
  WgmmaRing<Cfg> const r{smem + pad, smem_shared + pad};
  WgmmaCopier<Cfg> const src(g, tid, warp, lane);
  // The block's tokens come first, its padding after (kernels/moe_sort.cuh): the chunks that
  // hold any token. (threads >= block_m: the rules.)
  int const tokens = barrier_count(tid < Cfg::block_m && g.row_src[tid < Cfg::block_m ? tid : 0] >= 0);
  int const chunks = (tokens + Cfg::wg_chunk - 1) / Cfg::wg_chunk;
  float acc[Cfg::wg_chunks][Cfg::wg_chunk / 2];
#pragma unroll
  for (int c = 0; c < Cfg::wg_chunks; ++c)
#pragma unroll
    for (int i = 0; i < Cfg::wg_chunk / 2; ++i) acc[c][i] = 0.0f;
  if constexpr (Cfg::a_fp8) {
    wgmma_k_loop_for_chunks<Cfg, false>(chunks, g, r, src, warp, lane, acc);
  } else {
    // A CTA whose fragments hold a scale byte outside the fast decode's range (rare: real
    // weights' scales lie far inside it) takes the exact decode, with every token chunk
    // multiplied: one more k loop per kernel, not one per chunk count.
    if (barrier_any(wgmma_fragment_needs_exact_decode<Cfg>(g, src, lane)))
      wgmma_k_loop<Cfg, Cfg::wg_chunks, true>(g, r, src, warp, lane, acc);
    else
      wgmma_k_loop_for_chunks<Cfg, false>(chunks, g, r, src, warp, lane, acc);
  }
  if constexpr (Cfg::a_fp8) {
#pragma unroll
    for (int c = 0; c < Cfg::wg_chunks; ++c)
#pragma unroll
      for (int x = 0; x < Cfg::wg_chunk / 2; ++x) acc[c][x] *= 64.0f;  // the e4m3 weight codes read value * 2^-6
  }
  copy_wait<0>();
  barrier();  // the C tile below reuses the ring

  // Accumulator acc[c][4j + h] of lane (g, q): weight row g (+8 for h >= 2) of the warp's
  // fragment, token c * chunk + 8j + 2q + (h & 1). Stage one's C columns interleave gate (even)
  // and up (odd) per h column (the epilogue's order); stage two's are the fragment's rows.
  // Chunks without tokens hold zeros and are stored too (the epilogues skip padding rows).
  float* ct = reinterpret_cast<float*>(smem);
  int const g8 = lane >> 2, q = lane & 3;
#pragma unroll
  for (int c = 0; c < Cfg::wg_chunks; ++c)
#pragma unroll
    for (int j = 0; j < Cfg::wg_chunk / 8; ++j)
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        int const row = h < 2 ? g8 : g8 + 8;
        int const col = Cfg::stage == 1 ? 16 * warp + 2 * g8 + (h >> 1) : 16 * warp + row;
        int const token = c * Cfg::wg_chunk + 8 * j + 2 * q + (h & 1);
        ct[token * Cfg::c_stride + col] = acc[c][4 * j + h];
      }
  barrier();
}

#else
// Other targets: the rules (wgmma_rules) never select this loop there; the stub keeps the
// dispatch in moe_stage1/2.cuh compiling.
template <class Cfg>
MOETUNE_DEV void wgmma_gemm_tile(const GemmArgs&, u8*) {
  static_assert(Cfg::stage == 0, "the wgmma main loop is an sm_90a main loop");
}
#endif  // MOETUNE_SM90A

}  // namespace moetune
