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
          int Reduce_, int Mainloop_, int WLayout_, int HBf16_, int XBf16_, int TileMajor_, int SortHalves_>
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
  // The main loop (the last template parameter): 0 = tokens on the MMA's M side, weights
  // streamed into registers (moe_gemm.cuh); 1 = swapped operands, weights on the MMA's M side
  // and tokens on its N side (moe_swap_gemm.cuh: the few-tokens-per-expert kernels); 2 = staged:
  // both operands through a cp.async ring in LDS, the weights decoded once per CTA into a bf16
  // LDS tile and both read with ldmatrix (moe_staged_gemm.cuh: many tokens per expert); 3 = the
  // staged ring with fragment decode: each warp decodes the repacked weights of its own MMA
  // fragments from the raw ring into registers (no decoded LDS tile, no ldmatrix for them:
  // half the LDS traffic and no double-buffered tile), the activations read in the K order
  // the decoded words come out in (moe_staged_gemm.cuh, staged_fd_gemm_tile).
  // 4 = Hopper's warpgroup MMA: the weights decoded straight into wgmma's register A
  // operand, the tokens its N side read from swizzled LDS rows (moe_wgmma_gemm.cuh, sm_90a);
  // 5 = the same with the A16W4 weights decoded one k16 step at a time (wg_k16: 8 A registers
  // live instead of 32, so ptxas keeps the wgmmas asynchronous where 4 serialises them).
  // 6 = the same decoded two k16 steps at a time (wg_k32: 16 A registers in two buffers of 8,
  // one fence, commit and wait per 32 K instead of per 16 K).
  // 7 = the register GEMV on mma.sync (moe_gemv_gemm.cuh, the decode sizes): one 16-row
  // fragment of the wgmma tile layout per CTA, its warps splitting K, every weight piece of a
  // warp's k-tile loaded into registers at once, the block's tokens mma.sync's N side.
  static constexpr bool swap_ab = Mainloop_ == 1;
  static constexpr bool staged = Mainloop_ == 2 || Mainloop_ == 3;
  static constexpr bool staged_fd = Mainloop_ == 3;
  static constexpr bool wgmma = Mainloop_ == 4 || Mainloop_ == 5 || Mainloop_ == 6;
  static constexpr bool wg_k16 = Mainloop_ == 5;
  static constexpr bool wg_k32 = Mainloop_ == 6;
  static constexpr bool gemv = Mainloop_ == 7;
  // The main loops with a geometry of their own (not the register loop's warps_m x warps_n
  // tiles of tokens on M): the rules below about that tiling do not apply to them.
  static constexpr bool own_geometry = swap_ab || wgmma || gemv;
  // The MXFP4 weight layout (the last parameter): 0 = AITER's natural nibbles, 1 = repacked at
  // load time (autotune/moe/mxfp4_repack.hpp; decode_mxfp4_repacked in mx_decode.cuh), 2 = the
  // wgmma tile layout, also prepared at load time (autotune/moe/mxfp4_wgmma_tiles.hpp).
  static constexpr bool w_repacked = WLayout_ == 1;
  static constexpr bool w_tiled = WLayout_ == 2;
  // An A8W4 stage one that writes h as bf16 holding its MXFP8-quantised values (the `_hb`
  // pair: the stage two reading it is compiled as the A16W4 stage two; moe_stage1.cuh).
  static constexpr bool h_bf16 = HBf16_ != 0;
  // An A8W4 stage one reading x upcast to bf16 by its first launch (moe_upcast_x.cuh; `_xb`):
  // compiled with dtype a16w4 (bf16 x, MXFP4 w1: A16W4's main loop and weight words) and Fp8_
  // the A8W4 flavour, so that only its epilogue is A8W4's (h quantised per 1x32).
  static constexpr bool x_bf16 = XBf16_ != 0;
  // The grid's order (the last parameter): 0 = x the sorted blocks, y the column tiles, so the
  // CTAs launched together share a column tile and stream every block's token rows; 1 =
  // tile-major (x the column tiles, y the blocks), so the CTAs launched together share a
  // block's token rows (read once from DRAM, then from L2 by each column tile) and an expert's
  // weights are read while its consecutive blocks run (session 27; moe_gemm.cuh's grid_sorted_block).
  static constexpr bool tile_major = TileMajor_ != 0;
  // A stage two reading a sort of 2 x block_m tokens per block in halves (the last parameter;
  // moe_stage2.cuh): grid row b is rows [b * block_m, (b + 1) * block_m) of the sorted slots,
  // with the expert of sorted block b / 2, so its stage one can take twice its block_m.
  static constexpr bool sort_halves = SortHalves_ != 0;
  // Whether stage one quantises h per 1x32 (A8W4's intermediate, whatever its main loop).
  static constexpr bool h_mx = stage == 1 && (dtype == dtype_a8w4 || x_bf16);

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

  // Swapped operands: 16 weight rows per fragment (the MMA's M), sw_tn tokens per fragment
  // (its N: 8 for mma.sync m16n8k16, 16 for the 16x16 MFMA); each lane supplies sw_rpl weight
  // rows. Warps take row fragments first (warps_n), the rest split K inside the CTA (warps_k)
  // and add their partial sums in LDS.
  static constexpr int sw_tn = path == path_sm80 ? 8 : 16;
  static constexpr int sw_rpl = path == path_sm80 ? 2 : 1;
  static constexpr int sw_row_frags = nv / 16;
  static constexpr int sw_warps_n = warps < sw_row_frags ? warps : sw_row_frags;
  static constexpr int sw_warps_k = sw_warps_n > 0 ? warps / sw_warps_n : 1;
  static constexpr int sw_nt = sw_warps_n > 0 ? sw_row_frags / sw_warps_n : 0;
  static constexpr int sw_mt = block_m / sw_tn;
  // Independent accumulator sets the MMA steps alternate between: with one or two 16 x N
  // tiles per warp every step would wait for the previous MMA's result (Nsight Compute,
  // results/sm_90/2026-12-01-h200-s5/probes/p5: the NOPs between dependent HMMAs took the most
  // stall samples of the swapped stage one); the sets are added once at the end.
  static constexpr int sw_chains = sw_mt * sw_nt == 1 ? 4 : sw_mt * sw_nt == 2 ? 2 : 1;
  // The copy ring (moe_swap_gemm.cuh's SwapRing): per stage and lane, 16-byte slots for the
  // weight pieces and the activations, 4-byte slots for the scale words; `stages` stages.
  static constexpr int sw_vecs = chunks * (sw_nt * sw_rpl * (w_bf16 ? 4 : 1) + sw_mt * (a_fp8 ? 2 : 4));
  static constexpr int sw_words = chunks * ((w_bf16 ? 0 : sw_nt * sw_rpl) + (a_fp8 ? sw_mt : 0));
  static constexpr int sw_ring_bytes = warps * stages * warp_size * (sw_vecs * 16 + sw_words * 4);

  // Staged main loop (moe_staged_gemm.cuh), per ring stage (256-byte aligned): the A rows as
  // they arrive (bf16, or fp8 for a8w4 plus one scale word per 16-byte piece), the raw MXFP4
  // weight rows and one scale word per 32-K piece; after the ring, two decoded bf16 weight
  // tiles and (a8w4) two decoded bf16 A tiles. bf16 tiles have block_k * 2-byte rows of
  // XOR-swizzled 16-byte chunks.
  static constexpr int st_a_row = a_fp8 ? block_k : 2 * block_k;
  static constexpr int st_a_pieces = block_m * (st_a_row / 16);  // 16-byte copies per stage
  static constexpr int st_w_pieces = nv * (block_k / 32);
  static constexpr int st_stage_bytes =
      (block_m * st_a_row + (a_fp8 ? st_a_pieces * 4 : 0) + st_w_pieces * 16 + st_w_pieces * 4 + 255) / 256 * 256;
  // Decoded tiles are double-buffered: tile kt+1 is decoded while tile kt is multiplied.
  // Fragment decode has none: the ring alone.
  static constexpr int st_bytes =
      stages * st_stage_bytes + (staged_fd ? 0 : 2 * nv * block_k * 2 + (a_fp8 ? 2 * block_m * block_k * 2 : 0));

  // wgmma main loop (moe_wgmma_gemm.cuh): one 16-row weight fragment per warp (nv = 16 *
  // warps), 64-K steps; per ring stage the token rows, the weight pieces, their scale words
  // and (a8w4) the tokens' scale bytes; 1 KB spare to align the ring's start.
  static constexpr int wg_sub = block_k / 64;
  // gemv main loop (moe_gemv_gemm.cuh): after the C tile, every warp's partial sums
  // [warp][token][16 rows] in fp32, added in warp order into the C tile.
  static constexpr int gv_part_at = (block_m * (nv + 4) * 4 + 15) / 16 * 16;
  static constexpr int gv_bytes = gv_part_at + warps * block_m * 16 * 4;
  // Tokens per wgmma (its N): a sorted block is multiplied in chunks, and chunks past the
  // block's last token are skipped (an expert's last block is partly padding: at 64 tokens per
  // expert about half of the 64-token blocks are), so the MMAs follow the tokens, not block_m.
  static constexpr int wg_chunk = block_m >= 64 ? 32 : block_m >= 32 ? 16 : block_m;
  static constexpr int wg_chunks = block_m / wg_chunk;
  static constexpr int wg_b_bytes = block_m * block_k * (a_fp8 ? 1 : 2);
  static constexpr int wg_w_bytes = nv * block_k / 2;
  static constexpr int wg_s_bytes = nv * block_k / 32;
  static constexpr int wg_as_bytes = a_fp8 ? block_m * block_k / 32 : 0;
  // The ring keeps every stage's token rows together (1024-aligned: the swizzle atoms), then
  // every stage's weight part (16-byte pieces, 128-aligned), so only the token rows pay the
  // swizzle's alignment: a stage padded whole to 1 KB left the 64-token kernels 3.8 KB short
  // of three CTAs per SM.
  static constexpr int wg_b_stride = (wg_b_bytes + 1023) / 1024 * 1024;
  static constexpr int wg_ws_stride = (wg_w_bytes + wg_s_bytes + wg_as_bytes + 127) / 128 * 128;
  static constexpr int wg_bytes = stages * (wg_b_stride + wg_ws_stride) + 1024;

  // A tile in LDS: bf16 rows padded by 16 B (bank spread), or fp8 rows + scale bytes.
  static constexpr int a_row_bytes = a_raw_fp8 ? block_k + 16 : 2 * block_k + 16;
  // Swapped kernels: the copy ring instead of the A tile; the C region holds one fp32 tile
  // per K-splitting warp (and reuses the ring).
  static constexpr int a_bytes =
      swap_ab  ? sw_ring_bytes
      : staged ? st_bytes
      : wgmma  ? wg_bytes
      : gemv   ? gv_bytes
               : block_m * a_row_bytes + (a_raw_fp8 ? block_m * (block_k / 32) : 0);
  static constexpr int c_stride = nv + 4;  // fp32 epilogue tile, floats per row
  static constexpr int c_bytes = (swap_ab ? sw_warps_k : 1) * block_m * c_stride * 4;
  static constexpr int row_bytes = block_m * 4;  // slot of each tile row
  static constexpr int smem_bytes = (a_bytes > c_bytes ? a_bytes : c_bytes) + row_bytes;

  // The launch bounds' CTAs per SM: the `waves` knob; with waves 0 the A16W4 wgmma main loop
  // asks for as many CTAs as its LDS lets a Hopper SM hold (228 KB, 1 KB reserved per CTA), but
  // never so many that a thread has fewer registers than its accumulators plus 72. Why:
  // unbounded, ptxas gave the 16-token stage two 82 registers, 2 CTAs per SM where its LDS
  // allows 4 (bounded: 56 registers, 4 CTAs; backbone M = 512 stage two 378 -> 307 us, session
  // 14, results/sm_90/2026-12-03-h200-s14 p2, p3). A8W4 keeps the bound and the k loop it was
  // measured with before (moe_wgmma_gemm.cuh): with both changed it ran slower (p4; which of
  // the two did it is not measured).
  static constexpr int wg_accumulators = wg_chunks * wg_chunk / 2;
  static constexpr int wg_register_floor = 72 + wg_accumulators;
  static constexpr int lds_ctas_per_sm = 233472 / (smem_bytes + 1024);
  static constexpr int register_ctas_per_sm = 65536 / (threads * wg_register_floor);
  static constexpr int wg_ctas_per_sm = lds_ctas_per_sm < register_ctas_per_sm ? lds_ctas_per_sm : register_ctas_per_sm;
  static constexpr int launch_min_blocks = waves > 0 ? waves : !wgmma || a_fp8 ? 1 : wg_ctas_per_sm > 1 ? wg_ctas_per_sm : 1;

  // Global->register A loads: 16-byte vectors; fp8 vectors hold 16 elements, bf16 hold 8.
  static constexpr int a_vec_elems = a_fp8 ? 16 : 8;
  static constexpr int a_vecs = block_m * (block_k / a_vec_elems);
  static constexpr int a_vecs_per_thread = (a_vecs + threads - 1) / threads;
  static constexpr int a_scales = a_raw_fp8 ? block_m * (block_k / 32) : 0;
  static constexpr int a_scales_per_thread = (a_scales + threads - 1) / threads;

  static_assert(stage == 1 || stage == 2, "stage is 1 or 2");
  static_assert(block_k % 32 == 0, "block_k must be a multiple of 32 (MX scale granularity)");
  static_assert(Mainloop_ >= 0 && Mainloop_ <= 7,
                "main loop 0 (registers), 1 (swapped), 2 (staged), 3 (staged, fragment decode), 4 (wgmma), 5 "
                "(wgmma, k16 decode), 6 (wgmma, k32 decode) or 7 (gemv)");
  static_assert(!wg_k16 || !a_fp8, "the k16 decode is the a16w4 wgmma loop's (a8w4 decodes per k32 step)");
  static_assert(!wg_k32 || !a_fp8, "the k32 decode is the a16w4 wgmma loop's (a8w4 decodes per k32 step its own way)");
  static_assert(!h_bf16 || h_mx, "h kept in bf16: an a8w4 stage one's output (its stage two is compiled as a16w4's)");
  static_assert(!x_bf16 || (stage == 1 && dtype == dtype_a16w4),
                "x upcast to bf16: an a8w4 stage one compiled with the a16w4 main loop");
  static_assert(swap_ab ? (stages >= 2 && stages <= 8)
                : staged ? (stages >= 3 && stages <= 5)
                : wgmma  ? (stages >= 3 && stages <= 8)
                : gemv   ? stages == 1
                         : (stages >= 1 && stages <= 3),
                "stages is 1, 2 or 3 (swapped operands: a ring of 2 to 8 k-tiles; staged: 3 to 5; wgmma: 3 to 8; "
                "gemv: 1)");
  static_assert(!tile_major || stage == 2 || ksplit == 1, "tile-major grid: not with stage one's cluster split");
  static_assert(stage == 2 || ksplit == 1 || (wgmma && ksplit <= 8),
                "stage-one split-K: the wgmma main loop, a cluster of at most 8 CTAs (moe_stage1_ksplit)");
  static_assert(ksplit == 1 || !reduce, "split-K needs the atomic stage two");
  static_assert(!sort_halves || stage == 2, "the sort read in halves: a stage two's");
  static_assert(own_geometry || block_n % 32 == 0, "block_n must be a multiple of 32");
  static_assert(own_geometry || block_m % 16 == 0, "block_m must be a multiple of 16");
  static_assert(own_geometry || block_m <= 64 || block_m % 64 == 0, "block_m above 64 must be a multiple of 64");
  static_assert(own_geometry || warps % warps_m == 0, "warps must be a multiple of block_m/64");
  static_assert(own_geometry || warp_rows % mma::MH == 0, "rows per warp must be a multiple of the MMA M");
  static_assert(own_geometry || nv % (mma::FW * warps_n) == 0, "weight rows per CTA must split over the warps");
  static_assert(staged || wgmma || gemv || block_k % chunk == 0, "block_k must be a multiple of 32*kpack*lanes-per-row");
  static_assert(!mma::scaled || (kpack == 1 && dtype == dtype_a8w4),
                "scaled MFMA: a8w4 with kpack 1 only");
  static_assert(own_geometry || mt * nt * mma::ACC <= 128, "accumulator tile too large for registers");
  static_assert(!swap_ab || path == path_sm80 || path == path_mfma16,
                "swapped operands: mma.sync m16n8k16 or the 16x16 MFMA");
  static_assert(!swap_ab || kpack == 1, "swapped operands: kpack 1");
  static_assert(!swap_ab || (nv % 16 == 0 && sw_row_frags % sw_warps_n == 0),
                "swapped operands: 16-row fragments split over the warps");
  static_assert(!swap_ab || (block_m % sw_tn == 0), "swapped operands: block_m a multiple of the MMA N");
  static_assert(!swap_ab || (stage == 2 || !a_fp8 || block_n % 32 == 0),
                "a8w4 stage one quantises h in 32-column blocks");
  static_assert(!swap_ab || sw_mt * sw_nt * 4 <= 128, "accumulator tile too large for registers");
  static_assert(!staged || (path == path_sm80 && kpack == 1 && !w_bf16),
                "staged: mma.sync with ldmatrix, kpack 1, MXFP4 weights");
  static_assert(!staged || (block_k % 64 == 0), "staged: block_k a multiple of 64 (128-byte swizzled rows)");
  static_assert(!staged || staged_fd || (nt % 2 == 0), "staged: an even number of 8-row weight fragments per warp (ldmatrix.x4)");
  static_assert(!staged_fd || ((dtype == dtype_a16w4 && w_repacked) || (dtype == dtype_a8w4 && !w_repacked && fp8 == fp8_e4m3fn)),
                "fragment decode: a16w4 with repacked weights, or a8w4 (e4m3 OCP) with natural ones");
  static_assert(!staged_fd || (warps_m == 1 && (block_k == 64 || block_k == 128 || block_k == 256)),
                "fragment decode: one warp row (block_m <= 64), block_k 64, 128 or 256 (XOR swizzle of 2-8 pieces)");
  static_assert(!w_repacked || (!w_bf16 && (swap_ab || staged)),
                "repacked weights: MXFP4, in the swapped or the staged main loop");
  static_assert(!wgmma || (path == path_sm80 && kpack == 1 && !w_bf16 && w_tiled),
                "wgmma: sm_90, kpack 1, MXFP4 weights in the wgmma tile layout");
  static_assert((wgmma || gemv) == w_tiled, "the wgmma tile layout is read by the wgmma and gemv main loops only");
  static_assert(!gemv || (path == path_sm80 && kpack == 1 && dtype == dtype_a16w4 && !x_bf16),
                "gemv: sm_90 mma.sync, kpack 1, A16W4 (bf16 activations, MXFP4 weights in the wgmma tile layout)");
  static_assert(!gemv || (nv == 16 && (block_m == 8 || block_m == 16) && block_k % 64 == 0),
                "gemv: one 16-row weight fragment per CTA, block_m 8 or 16 (one or two mma N sides), block_k in 64s");
  static_assert(!gemv || stage == 2 || ksplit == 1, "gemv: no stage-one split-K (its warps split K)");
  static_assert(!wgmma || ((warps == 4 || warps == 8 || warps == 12) && nv == 16 * warps),
                "wgmma: 4, 8 or 12 warps (one to three warpgroups), one 16-row weight fragment per warp");
  static_assert(!wgmma || (block_m == 8 || block_m == 16 || block_m == 32 || block_m == 64 || block_m == 128),
                "wgmma: block_m (the MMA's N) 8, 16, 32, 64 or 128");
  static_assert(!wgmma || block_k == 128 || block_k == 256, "wgmma: block_k 128 or 256 (an even number of 64-K steps)");
  static_assert(!wgmma || threads >= block_m, "wgmma: a thread per token row (the chunk count is one barrier count)");
  static_assert(!wgmma || !a_fp8 || (fp8 == fp8_e4m3fn && block_m <= 64),
                "wgmma a8w4: OCP e4m3 (the e4m3 wgmma), block_m <= 64 (two scratch sums)");
};

// silu(g) * u, in fp32.
MOETUNE_DEV float silu_mul(float g, float u) { return g / (1.0f + exp_f32(-g)) * u; }

}  // namespace moetune
