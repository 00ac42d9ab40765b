#pragma once
// One kernel variant: the stage, the data path it serves and every search knob. Its name is
// generated from the knobs and parses back into them (the tuned CSV stores only the name):
//   moetune_s1_a16w4_bf16_t32x128x256_w4_kp1_nk16_wv2_st2_gi_dw0
//   moetune_s2_a8w4_fp8_t32x128x256_w4_kp1_nk16_wv2_st2_ks2_dw0_atomic
//   moetune_s1_a16w4_bf16_t8x8x256_w4_kp1_nk16_wv0_st3_sab_gi_dw0
//   moetune_s1_a16w4_bf16_t128x64x64_w8_kp1_nk16_wv0_st3_stg_gi_dw0
//   moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0
//   moetune_s1_a16w4_bf16_t32x64x64_w4_kp1_nk16_wv4_st3_stg_fd_rp_gi_dw0
//   moetune_s1_a16w4_bf16_t16x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0
//   moetune_s2_a16w4_bf16_t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic
//   moetune_s1_a16w4_bf16_t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0
//   moetune_s2_a8w4_fp8_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic
//   moetune_s1_a8w4_fp8_t64x64x128_w8_kp1_nk16_wv0_st4_wg_k16_hb_xb_gi_dw0
// Tokens, in order: stage; dtype path; activation/intermediate format (bf16, fp8 = OCP e4m3,
// fnuz = e4m3fnuz); tile block_m x block_n x block_k; warps; kpack; nonkdim (0 = the FMA
// fallback); waves; stages; "sab" when the operands are swapped (weights on the MMA's M side)
// or "stg" for the staged main loop (then "fd" for its fragment decode) or "wg" for the wgmma
// main loop (whose weights are always in the wgmma tile layout; then "k16" for its decode one
// k16 step at a time), then "rp" when the MXFP4
// weights are in the repacked layout, then "hb" when an A8W4 pair keeps h in bf16, then "xb"
// when an A8W4 stage one reads x upcast to bf16 (each absent otherwise, so names from before
// these knobs still parse); stage one: "ks<N>" when it splits K (N >= 2; absent otherwise), gate/up order
// (gi interleaved, gs separated) and doweight_stage1; stage two: ksplit, doweight_stage1 and
// atomic|reduce. The optional tokens end with "tm" (the tile-major grid), then "hs" (a stage
// two reading the sort's blocks in halves), e.g.
//   moetune_s2_a16w4_bf16_t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_hs_ks1_dw0_atomic
#include <string>
#include <string_view>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"

namespace moetune::search {

using moe::DtypePath;
using moe::Fp8Flavor;
using moe::GateUpLayout;

enum class Stage2Mode { atomic, reduce };

struct KernelConfig {
  int stage = 1;  // 1 or 2
  DtypePath dtype = DtypePath::a16w4;
  Fp8Flavor fp8 = Fp8Flavor::ocp;  // a8w4 only; ignored (and printed as bf16) otherwise
  int block_m = 32;
  int block_n = 128;  // stage one: columns of h (2*block_n rows of w1); stage two: of y
  int block_k = 256;
  int warps = 4;
  int kpack = 1;
  int nonkdim = 16;  // 0 = FMA fallback; 16/32 = MMA shape (sm_90: 16 only)
  int waves = 0;     // 0 = no occupancy hint
  int stages = 2;    // 1 = plain, 2 = next A tile prefetched into registers, 3 = next A
                     // tile and next tile's weights prefetched (weights double-buffered);
                     // swapped operands: the k-tiles of the per-lane copy ring (2-8)
  int ksplit = 1;    // split-K: stage two's CTAs along z add into the atomic accumulator; stage
                     // one's (wgmma, sm_90) form a thread-block cluster that adds the partial
                     // sums before the SiLU epilogue (name token _ks<N> only when N > 1)
  GateUpLayout gate_up = GateUpLayout::interleaved;  // stage one only
  bool doweight_stage1 = false;
  Stage2Mode stage2_mode = Stage2Mode::atomic;  // stage two only
  // Weights on the MMA's M side and tokens on its N side (kernels/moe_swap_gemm.cuh): the
  // decode-size kernels. block_m is then the tokens per sorted block (8 or more on sm_90),
  // block_k the K each warp streams per step, and warps beyond the 16-row fragments split K.
  bool swap_ab = false;
  // The staged main loop (kernels/moe_staged_gemm.cuh): tokens on the MMA's M side, both
  // operands through a cp.async ring of `stages` k-tiles in LDS, the weights decoded once per
  // CTA into a bf16 LDS tile, ldmatrix fragments. The many-tokens-per-expert kernels (sm_90).
  bool staged = false;
  // The staged main loop with fragment decode (kernels/moe_staged_gemm.cuh,
  // staged_fd_gemm_tile): each warp decodes the repacked weights of its own MMA fragments
  // from the raw ring into registers instead of a shared decoded LDS tile (with one warp row
  // nothing is shared, and the tile cost half the LDS traffic and a third of the CTAs per SM).
  bool fragment_decode = false;
  // The MXFP4 weights in the repacked layout prepared once at load time
  // (autotune/moe/mxfp4_repack.hpp): the same bytes per row, each 32-bit word's 8 elements
  // placed so the decode takes ~3.75 instructions per bf16 pair instead of ~5 (sm_90, swapped
  // or staged main loop).
  bool repacked = false;
  // Hopper's warpgroup MMA (kernels/moe_wgmma_gemm.cuh, sm_90a): the MXFP4 weights decoded
  // straight into wgmma's register A operand (16 rows per warp: block_n is 8 x warps in stage
  // one, 16 x warps in stage two), the block_m tokens its N side, read from swizzled LDS rows;
  // the weights in the wgmma tile layout prepared once at load time
  // (autotune/moe/mxfp4_wgmma_tiles.hpp). Name token `_wg`.
  bool wgmma = false;
  // The A16W4 wgmma loop's decode one k16 step at a time into two 4-register A buffers
  // instead of whole 64-K steps into two 16-register ones (kernels/moe_wgmma_gemm.cuh,
  // wgmma_a16w4_tile_grouped): where the launch bound leaves ptxas too few registers for the 64-K
  // form it serialises every wgmma; this form keeps them asynchronous at one fence and one
  // wait per k16 step instead of per 64-K step. Name token `_k16` after `_wg`.
  bool wgmma_k16 = false;
  // The same decoded two k16 steps at a time into two 8-register A buffers
  // (wgmma_a16w4_tile_grouped): one fence, commit and wait per 32 K, eight bf16x2 chains between
  // waits, at 8 A registers more than the k16 form. Name token `_k32` after `_wg`; not with
  // `_k16`.
  bool wgmma_k32 = false;
  // The register GEMV on the wgmma tile layout (kernels/moe_gemv_gemm.cuh, sm_90 mma.sync): the
  // decode sizes' main loop. One 16-row weight fragment per CTA (block_n 8 in stage one, 16 in
  // stage two), its warps splitting K in k-tiles of block_k whose weight pieces a lane loads
  // into registers at once (no shared-memory ring), the block_m (8 or 16) tokens mma.sync's N
  // side read straight from the activation rows. A16W4. Name token `_gv` after `_wg` (it reads
  // the wgmma main loop's weight layout); not with `_k16` or `_k32`.
  bool gemv = false;
  // The stage kernel's grid tile-major (kernels/moe_config.cuh, tile_major): x the column
  // tiles, y the sorted blocks, so the CTAs that run together share a block's token rows (read
  // from DRAM once, then from L2 by every column tile) and an expert's weights are read while
  // its consecutive blocks run; the default order (x the blocks) streams every block's token
  // rows once per column tile. Any main loop; not with stage one's cluster split. Name token
  // `_tm`, last of the optional tokens.
  bool tile_major = false;
  // Stage two only: the sort's blocks are twice this stage's block_m (the stage one's block_m)
  // and each is read as two halves: grid row b multiplies sorted rows [b * block_m, (b + 1) *
  // block_m) with the expert of sorted block b / 2, and a half that holds only padding exits at
  // once (kernels/moe_stage2.cuh). Why: at I = 640 and many tokens per expert the 128-token
  // stage one gains (each expert's w1 decoded once per 128 tokens) while a 128-token stage two
  // loses (five k-tiles per CTA at one CTA per SM; docs/performance.md item 3); with this the
  // pair can take the 128-token stage one and the 64-token stage two. Any main loop. Name token
  // `_hs`, after `_tm`.
  bool sort_halves = false;
  // A8W4 only, a property of the pair (both stages carry it or neither): the intermediate h is
  // stored as bf16 holding its MXFP8-quantised values (e4m3 code x 2^scale, exact in bf16)
  // instead of e4m3 codes plus E8M0 scales. Stage one quantises by the contract's rule as
  // before and writes the values; stage two is then the A16W4 stage two (bf16 h x MXFP4
  // weights: compiled_as() below), without the A8W4 loop's per-32-K scratch sums and their
  // scaling (kernels/moe_wgmma_gemm.cuh, wgmma_a8w4_apply), at twice h's bytes. Name token `_hb`.
  bool h_bf16 = false;
  // A8W4 stage one only: x's MXFP8 values upcast to bf16 (code x 2^scale, exact) by the
  // stage's first launch, CTAs beside the sort's (kernels/moe_upcast_x.cuh), so the main loop
  // is A16W4's (bf16 x, w1 in A16W4's wgmma tile words: compiled_as() below) and only the
  // epilogue is A8W4's, quantising h per 1x32 as before. Why: the A8W4 wgmma loop's per-32-K
  // scratch sums (stage one at backbone M = 4096: 2153 us against A16W4's 1076). Costs one read
  // of x and a write of twice its bytes per MoE. The wgmma main loop only. Name token `_xb`.
  bool x_bf16 = false;

  [[nodiscard]] std::string name() const;
  friend bool operator==(const KernelConfig&, const KernelConfig&) = default;
};

// The configuration the kernel is compiled from: the configuration itself, except that an A8W4
// stage two reading bf16 h (h_bf16) is the A16W4 stage two of the same knobs (its inputs are
// exactly an A16W4 stage two's: bf16 h, MXFP4 w2, and it writes the same bf16 y). Its kernel
// type, machine code, traits and validity rules are the A16W4 kernel's; its name stays A8W4's.
// Likewise an A8W4 wgmma stage one reading x in bf16 (x_bf16) is compiled with dtype A16W4, keeping
// x_bf16, h_bf16 and the fp8 flavour, which select A8W4's epilogue (kernels/moe_config.cuh):
// its main loop, traits and main-loop rules are A16W4's.
[[nodiscard]] KernelConfig compiled_as(const KernelConfig& c);

// The tokens per sorted block of the sort a stage reads: its block_m, or for a stage two
// reading the sort in halves (sort_halves) twice that. A pair's stages agree on it.
[[nodiscard]] inline int sort_block_m(const KernelConfig& c) {
  return c.stage == 2 && c.sort_halves ? 2 * c.block_m : c.block_m;
}

// `other`, a configuration of a pipeline's other stage, made to read the sort `subject` reads:
// unchanged where it already does, else with block_m set to that sort's (a stage two then
// reading it whole, sort_halves off). The tuner's and `verify`'s partner rule.
[[nodiscard]] KernelConfig with_sort_of(KernelConfig other, const KernelConfig& subject);

// Whether a pipeline's h is fp8 codes [slots][I] plus E8M0 scales [slots][I/32] (an A8W4
// pair that does not keep h in bf16) rather than bf16 [slots][I]: the buffers the host sizes.
[[nodiscard]] inline bool h_is_fp8(const KernelConfig& stage1) {
  return stage1.dtype == DtypePath::a8w4 && !stage1.h_bf16;
}

// The weight layout a kernel reads (kernels/moe_config.cuh's WLayout), prepared once at load
// time for every kernel but the natural ones: AITER's own MXFP4 (and bf16) tensors, the
// repacked MXFP4 words (`_rp`) or the wgmma tiles (`_wg`, codes and scales both) in the words
// of the shape's dtype; wgmma_tiles_a16w4: the wgmma tiles in A16W4's words for an A8W4 shape,
// read by an A8W4 stage two that keeps h in bf16 (its kernel is A16W4's).
enum class WeightLayout { natural = 0, repacked = 1, wgmma_tiles = 2, wgmma_tiles_a16w4 = 3 };
[[nodiscard]] WeightLayout weight_layout(const KernelConfig& c);
[[nodiscard]] std::string_view to_string(WeightLayout layout);

// Parses a name made by KernelConfig::name(). Throws moetune::Error naming the offending token
// (its position and text) and what was expected there.
[[nodiscard]] KernelConfig parse_kernel_name(std::string_view name);

[[nodiscard]] std::string_view to_string(Stage2Mode mode);

}  // namespace moetune::search
