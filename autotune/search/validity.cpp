#include "autotune/search/validity.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "autotune/search/kernel_traits.hpp"

namespace moetune::search {
namespace {

bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// Knob ranges of the swapped-operand kernels (kernels/moe_swap_gemm.cuh): block_m is the
// tokens of a sorted block, on the MMA's N side (8 on mma.sync m16n8k16, 16 on the 16x16
// MFMA); block_n only has to fill whole 16-row weight fragments.
template <class Add>
void swapped_rules(const KernelConfig& c, Arch arch, Add& add) {
  auto const lim = limits(arch);
  int const tn = lim.nvidia ? 8 : 16;
  if (c.block_m < tn || c.block_m % tn != 0 || c.block_m > 64)
    add(fmt::format("block_m {} with swapped operands is not a multiple of {} (the MMA's N) up to 64", c.block_m, tn));
  int const nv = c.stage == 1 ? 2 * c.block_n : c.block_n;
  if (c.block_n <= 0 || nv % 16 != 0)
    add(fmt::format("block_n {} with swapped operands does not fill 16-row weight fragments", c.block_n));
  if (c.stage == 1 && c.dtype == DtypePath::a8w4 && c.block_n % 32 != 0)
    add(fmt::format("block_n {} in an a8w4 stage one is not a multiple of 32 (h is quantised per 32 columns)", c.block_n));
  if (c.nonkdim != 16)
    add(fmt::format("nonkdim {} with swapped operands: only 16 (16 weight rows per MMA)", c.nonkdim));
  if (c.kpack != 1) add(fmt::format("kpack {} with swapped operands: only 1", c.kpack));
  if (c.stages < 2 || c.stages > 8)
    add(fmt::format("stages {} with swapped operands: a copy ring of 2 to 8 k-tiles", c.stages));
}

// Knob ranges of the staged main loop (kernels/moe_staged_gemm.cuh).
template <class Add>
void staged_rules(const KernelConfig& c, Arch arch, Add& add) {
  auto const lim = limits(arch);
  if (!lim.nvidia)
    add(fmt::format("the staged main loop reads fragments with ldmatrix (sm_90); it has no {} variant yet", to_string(arch)));
  if (c.swap_ab) add("staged and swapped operands are two different main loops: pick one");
  if (c.dtype == DtypePath::bf16)
    add("the staged main loop decodes MXFP4 weights into LDS; bf16 weights use the register main loop");
  if (c.nonkdim != 16) add(fmt::format("nonkdim {} in the staged main loop: only 16 (mma.sync m16n8k16)", c.nonkdim));
  if (c.kpack != 1) add(fmt::format("kpack {} in the staged main loop: only 1", c.kpack));
  if (c.block_k % 64 != 0)
    add(fmt::format("block_k {} in the staged main loop is not a multiple of 64 (128-byte swizzled LDS rows)", c.block_k));
  if (c.stages < 3 || c.stages > 5)
    add(fmt::format("stages {} in the staged main loop: a copy ring of 3 to 5 k-tiles (one being "
                    "multiplied, one being decoded, the rest in flight)", c.stages));
}

// Fragment decode (kernels/moe_staged_gemm.cuh, staged_fd_gemm_tile): a staged main loop whose
// warps decode the weight words of their own fragments. It needs one warp row (else two warps
// would decode the same weights) and 2, 4 or 8 pieces of 32 K per row and k-tile (the bank
// swizzle of the raw ring XORs the piece index: 6 pieces, block_k 192, would spill into the
// next row). A16W4 decodes repacked words into bf16 pairs; A8W4 turns natural
// words into e4m3 codes for the fp8 MMA (mma.sync m16n8k32 e4m3, OCP codes only), whose
// natural-layout conversion is 7 instructions per word where the repacked bits would need ~15.
template <class Add>
void fragment_decode_rules(const KernelConfig& c, Add& add) {
  if (!c.staged) add("fragment decode is a variant of the staged main loop (staged 1)");
  if (c.dtype == DtypePath::a16w4 && !c.repacked)
    add("a16w4 fragment decode reads whole words of the repacked MXFP4 layout (repack 1)");
  if (c.dtype == DtypePath::a8w4 && c.repacked)
    add("a8w4 fragment decode turns natural MXFP4 words into e4m3 codes (repack 0; the repacked bits would cost twice the instructions)");
  if (c.dtype == DtypePath::a8w4 && c.fp8 != Fp8Flavor::ocp)
    add("a8w4 fragment decode multiplies OCP e4m3 codes (mma.sync m16n8k32 e4m3): e4m3fnuz has no such MMA");
  if (c.block_m > 64)
    add(fmt::format("block_m {} with fragment decode: at most 64 (one warp row; two would decode every weight twice)", c.block_m));
  if (c.block_k != 64 && c.block_k != 128 && c.block_k != 256)
    add(fmt::format("block_k {} with fragment decode: 64, 128 or 256 (2, 4 or 8 pieces of 32 K per row: "
                    "the ring's bank swizzle permutes the pieces of a row by XOR)", c.block_k));
}

// The register GEMV (kernels/moe_gemv_gemm.cuh): a variant of the wgmma family (it reads the
// wgmma tile layout) on mma.sync, checked instead of the warpgroup loop's geometry: one 16-row
// fragment per CTA, the block's 8 or 16 tokens one or two mma N sides, the warps (any number up
// to 16) splitting K in k-tiles of whole 64-K pieces, no ring (stages 1), A16W4 only.
template <class Add>
void gemv_rules(const KernelConfig& c, const moe::MoeShape* shape, Add& add) {
  if (c.dtype != DtypePath::a16w4 || c.x_bf16)
    add("gemv 1 with a non-A16W4 main loop: the gemv loop multiplies bf16 activations by MXFP4 weights");
  if (c.wgmma_k16 || c.wgmma_k32) add("gemv 1 with wgmma_k16 or wgmma_k32: the gemv loop has its own decode step");
  int const want_n = c.stage == 1 ? 8 : 16;
  if (c.block_n != want_n)
    add(fmt::format("block_n {} with gemv: {} (one 16-row weight fragment per CTA{})", c.block_n, want_n,
                    c.stage == 1 ? ": 8 h columns, gate and up" : ""));
  if (c.block_m != 8 && c.block_m != 16)
    add(fmt::format("block_m {} with gemv: 8 or 16 (one or two mma.sync N sides of 8 tokens)", c.block_m));
  if (c.block_k < 64 || c.block_k % 64 != 0 || c.block_k > 1024)
    add(fmt::format("block_k {} with gemv: a multiple of 64 up to 1024 (the weight pieces of a k-tile are held in "
                    "registers)", c.block_k));
  if (c.warps < 1 || c.warps > 16) add(fmt::format("warps {} with gemv: 1 to 16 (they split K)", c.warps));
  if (c.stages != 1) add(fmt::format("stages {} with gemv: 1 (no copy ring: a k-tile is loaded into registers)", c.stages));
  if (c.stage == 1 && c.ksplit > 1)
    add(fmt::format("ksplit {} in a gemv stage one: its warps split K inside the CTA", c.ksplit));
  if (shape == nullptr) return;
  std::int64_t const k = c.stage == 1 ? shape->hidden : shape->inter;
  if (k % 64 != 0)
    add(fmt::format("{} {} with gemv: a multiple of 64 (the wgmma tile layout's 64-K steps)",
                    c.stage == 1 ? "model_dim" : "inter_dim", k));
}

// The wgmma main loop (kernels/moe_wgmma_gemm.cuh): Hopper's warpgroup MMA (sm_90a), one
// 16-row weight fragment per warp decoded into wgmma's register A operand, the block_m tokens
// its N side, 64-K steps, the weights in the wgmma tile layout (which needs K in whole 64-K
// steps; A8W4's token scale words need K in 128s and its scratch sums whole k-tiles).
template <class Add>
void wgmma_rules(const KernelConfig& c, Arch arch, const moe::MoeShape* shape, Add& add) {
  if (!limits(arch).nvidia)
    add(fmt::format("the wgmma main loop is Hopper's warpgroup MMA (sm_90a); {} has none", to_string(arch)));
  if (c.swap_ab || c.staged || c.fragment_decode)
    add("wgmma is a main loop of its own: swap_ab, staged and fragment_decode must be 0");
  if (c.repacked) add("the wgmma main loop reads its own weight layout (the wgmma tiles): repack must be 0");
  if (c.dtype == DtypePath::bf16) add("the wgmma main loop decodes MXFP4 weights; bf16 weights use the register main loop");
  if (c.dtype == DtypePath::a8w4 && c.fp8 != Fp8Flavor::ocp)
    add("a8w4 wgmma multiplies OCP e4m3 codes: e4m3fnuz has no such wgmma");
  if (c.nonkdim != 16) add(fmt::format("nonkdim {} with wgmma: only 16", c.nonkdim));
  if (c.kpack != 1) add(fmt::format("kpack {} with wgmma: only 1", c.kpack));
  if (c.gemv) {
    gemv_rules(c, shape, add);
    return;
  }
  // Three warpgroups (session 29): the 128-token pair's 192 / 384 weight rows per CTA at one
  // CTA of 12 warps per SM (124 registers), the default from 128 tokens per expert.
  if (c.warps != 4 && c.warps != 8 && c.warps != 12)
    add(fmt::format("warps {} with wgmma: 4, 8 or 12 (one to three warpgroups)", c.warps));
  int const want_n = wgmma_block_n(c.stage, c.warps);
  if (c.block_n != want_n)
    add(fmt::format("block_n {} with wgmma and {} warps: {} (one 16-row weight fragment per warp{})", c.block_n,
                    c.warps, want_n, c.stage == 1 ? ": 8 h columns, gate and up" : ""));
  if (c.block_m != 8 && c.block_m != 16 && c.block_m != 32 && c.block_m != 64 && c.block_m != 128)
    add(fmt::format("block_m {} with wgmma: 8, 16, 32, 64 or 128 (the MMA's N)", c.block_m));
  if (c.dtype == DtypePath::a8w4 && c.block_m > 64)
    add(fmt::format("block_m {} with a8w4 wgmma: at most 64 (two scratch sums beside the accumulators)", c.block_m));
  if (c.block_k != 128 && c.block_k != 256)
    add(fmt::format("block_k {} with wgmma: 128 or 256 (an even number of 64-K steps)", c.block_k));
  if (c.stages < 3 || c.stages > 8)
    add(fmt::format("stages {} with wgmma: a copy ring of 3 to 8 k-tiles (a stage is refilled two k-tiles after "
                    "it was read)", c.stages));
  if (shape == nullptr) return;
  std::int64_t const k = c.stage == 1 ? shape->hidden : shape->inter;
  char const* const k_name = c.stage == 1 ? "model_dim" : "inter_dim";
  if (k % 64 != 0) add(fmt::format("{} {} with wgmma: a multiple of 64 (the wgmma tile layout's 64-K steps)", k_name, k));
  if (c.dtype == DtypePath::a8w4 && (k % 128 != 0 || k % c.block_k != 0))
    add(fmt::format("{} {} with a8w4 wgmma: a multiple of 128 and of block_k {} (whole k-tiles)", k_name, k, c.block_k));
}

// The repacked MXFP4 layout (autotune/moe/mxfp4_repack.hpp): read by the swapped and the
// staged main loops' decode, whose fast path is CUDA's bf16x2 multiply (elsewhere the exact
// fp32 path would decode it, slower than the natural layout's MFMA-side decode).
template <class Add>
void repacked_rules(const KernelConfig& c, Arch arch, Add& add) {
  if (!limits(arch).nvidia)
    add(fmt::format("repacked MXFP4 weights are decoded with bf16x2 multiplies (sm_90); {} reads the natural layout", to_string(arch)));
  if (c.dtype == DtypePath::bf16) add("repacked weights are an MXFP4 layout; bf16 weights have none");
  if (!c.swap_ab && !c.staged)
    add("repacked weights are read by the swapped and the staged main loops only (swap_ab or staged)");
}

// Per-lane register budget the estimate must stay under. The estimate is rough (it ignores
// what the compiler hoists); 0.65 of the real limit kept every ci.json candidate spill-free
// under ptxas for sm_90 (docs/kernels.md has the figures).
// The swapped-operand and staged kernels hold nothing across k-tiles but their accumulators
// (their rings are in LDS), so their
// register use barely moves with the tile knobs; for them the estimate only has to fit the
// hardware limit the occupancy hint implies, and ptxas's spill report (compile step) decides.
// The e4m3 flavour an A8W4 name must carry on the arch: fnuz on gfx942, OCP elsewhere.
template <class Add>
void fp8_flavour_rules(const KernelConfig& c, Arch arch, Add& add) {
  if (arch == Arch::gfx942 && c.fp8 != Fp8Flavor::fnuz) add("a8w4 on gfx942 uses e4m3fnuz (fnuz), not OCP e4m3");
  if (arch != Arch::gfx942 && c.fp8 != Fp8Flavor::ocp)
    add(fmt::format("a8w4 on {} uses OCP e4m3 (fp8), not e4m3fnuz", to_string(arch)));
}

int register_budget(const KernelConfig& c, Arch arch, int threads) {
  auto const lim = limits(arch);
  int const occupancy = std::max(1, c.waves);
  int hw = lim.registers_per_lane;
  if (lim.nvidia) hw = std::min(hw, lim.registers_per_sm / std::max(1, threads * occupancy));
  else hw = std::min(hw, 512 / occupancy);
  return c.swap_ab || c.staged || c.wgmma ? hw : hw * 65 / 100;
}

void rules(const KernelConfig& c, Arch arch, const moe::MoeShape* shape,
           std::vector<std::string>& out) {
  auto const lim = limits(arch);
  auto const an = to_string(arch);
  auto add = [&](std::string s) { out.push_back(std::move(s)); };

  // Knob ranges.
  if (c.stage != 1 && c.stage != 2) add(fmt::format("stage {} is neither 1 nor 2", c.stage));
  if (c.staged) staged_rules(c, arch, add);
  if (c.repacked) repacked_rules(c, arch, add);
  if (c.fragment_decode) fragment_decode_rules(c, add);
  if (c.wgmma) wgmma_rules(c, arch, shape, add);
  if (c.wgmma_k16 && !c.wgmma) add("wgmma_k16 1 without wgmma: the k16 decode is the wgmma main loop's");
  if (c.wgmma_k16 && c.dtype != DtypePath::a16w4)
    add(fmt::format("wgmma_k16 1 with {}: the k16 decode is A16W4's (A8W4 decodes per k32 step)", moe::to_string(c.dtype)));
  if (c.wgmma_k32 && !c.wgmma) add("wgmma_k32 1 without wgmma: the k32 decode is the wgmma main loop's");
  if (c.wgmma_k32 && c.dtype != DtypePath::a16w4)
    add(fmt::format("wgmma_k32 1 with {}: the k32 decode is A16W4's (A8W4 decodes per k32 step its own way)",
                    moe::to_string(c.dtype)));
  if (c.wgmma_k16 && c.wgmma_k32) add("wgmma_k16 1 with wgmma_k32 1: one decode step, k16 or k32");
  if (c.gemv && !c.wgmma) add("gemv 1 without wgmma: the gemv loop reads the wgmma tile layout (wgmma 1)");
  if (c.swap_ab) {
    swapped_rules(c, arch, add);
  } else if (!c.wgmma) {
    if (c.block_m < 16 || c.block_m % 16 != 0)
      add(fmt::format("block_m {} is not a positive multiple of 16 (the MMA row tile)", c.block_m));
    if (c.block_m > 64 && c.block_m % 64 != 0)
      add(fmt::format("block_m {} above 64 is not a multiple of 64 (warps split M by 64)", c.block_m));
    if (c.block_n <= 0 || c.block_n % 32 != 0)
      add(fmt::format("block_n {} is not a multiple of 32 (MX scale granularity of h)", c.block_n));
  }
  if (c.block_k <= 0 || c.block_k % 32 != 0)
    add(fmt::format("block_k {} is not a multiple of 32 (MX scale granularity)", c.block_k));
  // (The wgmma loop's warp counts, 12 among them, are wgmma_rules'.)
  if ((!c.wgmma && !is_pow2(c.warps)) || c.warps > 1024 / lim.warp_size)
    add(fmt::format("warps {} is not a power of two up to {} on {}", c.warps, 1024 / lim.warp_size, an));
  if (c.kpack != 1 && c.kpack != 2 && c.kpack != 4)
    add(fmt::format("kpack {} is not 1, 2 or 4", c.kpack));
  if (arch == Arch::gfx950 && c.kpack != 1) add(fmt::format("kpack {} on gfx950: only 1 is valid", c.kpack));
  if (lim.nvidia && c.nonkdim != 0 && c.nonkdim != 16)
    add(fmt::format("nonkdim {} on {}: only 16 (mma.sync m16n8k16) or 0 (FMA)", c.nonkdim, an));
  if (!lim.nvidia && c.nonkdim != 0 && c.nonkdim != 16 && c.nonkdim != 32)
    add(fmt::format("nonkdim {} on {}: only 16, 32 (MFMA) or 0 (FMA)", c.nonkdim, an));
  if (!c.swap_ab && !c.staged && !c.wgmma && (c.stages < 1 || c.stages > 3)) add(fmt::format("stages {} is not 1, 2 or 3", c.stages));
  if (c.waves < 0 || c.waves > lim.max_waves)
    add(fmt::format("waves {} is outside 0..{} on {}", c.waves, lim.max_waves, an));
  if (c.ksplit < 1) add(fmt::format("ksplit {} is below 1", c.ksplit));
  // Stage one's split-K adds its partial sums before the SiLU epilogue inside a thread-block
  // cluster of ksplit CTAs (kernels/moe_stage1.cuh, kernels/cluster_sm90.cuh): the wgmma main
  // loop's kernels only (sm_90), and at most 8 CTAs (the portable cluster size).
  // The tile-major grid (KernelConfig::tile_major): stage one's cluster split runs along z with
  // the blocks on x; the two are not built together.
  if (c.tile_major && c.stage == 1 && c.ksplit > 1)
    add(fmt::format("tile_major 1 with ksplit {} in stage one: the cluster split keeps the sorted blocks on x", c.ksplit));
  // A stage two reading the sort in halves (KernelConfig::sort_halves) reads a sort of 2 x
  // block_m tokens, which its stage one makes; the sort's blocks are at most 128 tokens (the
  // largest stage-one block_m of any main loop here).
  if (c.sort_halves && c.stage != 2) add("sort_halves 1 in stage one: only a stage two reads the sort in halves");
  if (c.sort_halves && c.stage == 2 && 2 * c.block_m > 128)
    add(fmt::format("sort_halves 1 with block_m {}: the sort's blocks would be {} tokens, above 128", c.block_m,
                    2 * c.block_m));
  if (c.stage == 1 && c.ksplit > 1 && !c.wgmma)
    add(fmt::format("ksplit {} in stage one: stage one splits K only in the wgmma main loop (its partial sums are "
                    "added in a thread-block cluster, sm_90)",
                    c.ksplit));
  if (c.stage == 1 && c.ksplit > 8)
    add(fmt::format("ksplit {} in stage one: a cluster of at most 8 CTAs adds the partial sums", c.ksplit));
  if (c.stage == 2 && c.ksplit > 1 && c.stage2_mode == Stage2Mode::reduce)
    add(fmt::format("ksplit {} with the reduce stage two: split-K needs atomic accumulation", c.ksplit));
  if (c.dtype == DtypePath::a8w4) fp8_flavour_rules(c, arch, add);
  if (!out.empty()) return;  // the derived quantities below assume sane knobs

  auto const t = kernel_traits(c, arch);
  if (c.swap_ab) {
    if ((t.nv / 16) % t.warps_n != 0)
      add(fmt::format("{} 16-row weight fragments per CTA do not split over {} warps", t.nv / 16, t.warps_n));
    if (c.block_k % t.chunk != 0)
      add(fmt::format("block_k {} is not a multiple of {} (32 K per lane x 4 lanes per row)", c.block_k, t.chunk));
  } else if (c.warps % t.warps_m != 0)
    add(fmt::format("warps {} is not a multiple of block_m/64 = {}", c.warps, t.warps_m));
  if (!c.swap_ab && t.warp_rows % t.mh != 0)
    add(fmt::format("block_m {} gives {} rows per warp, not a multiple of the {}-row {} tile",
                    c.block_m, t.warp_rows, t.mh, to_string(t.path)));
  if (!c.swap_ab && t.nv % (t.fw * t.warps_n) != 0)
    add(fmt::format("{} weight rows per CTA do not split into {} warps x {}-row fragments",
                    t.nv, t.warps_n, t.fw));
  if (c.staged && !c.fragment_decode && t.nt % 2 != 0)
    add(fmt::format("{} weight rows per CTA give {} 8-row fragments per warp over {} warps: the staged "
                    "main loop loads them in pairs (ldmatrix.x4)", t.nv, t.nt, t.warps_n));
  if (!c.swap_ab && !c.staged && !c.wgmma && c.block_k % t.chunk != 0)
    add(fmt::format("block_k {} is not a multiple of {} (32*kpack K per lane x {} lanes per row of {})",
                    c.block_k, t.chunk, t.lpr, to_string(t.path)));
  bool const scaled = t.path == MmaPath::smfma16 || t.path == MmaPath::smfma32;
  if (scaled && c.kpack != 1) add("the scaled MFMA takes one MX block per lane: kpack must be 1");
  if (!out.empty()) return;
  if (t.accumulators > 128)
    add(fmt::format("{} fp32 accumulators per lane exceed 128 (tile too large for registers)", t.accumulators));
  if (t.smem_bytes > lim.shared_bytes)
    add(fmt::format("shared memory {} B exceeds the {} KB limit of {}", t.smem_bytes,
                    lim.shared_bytes / 1024, an));
  int const budget = register_budget(c, arch, t.threads);
  if (t.estimated_registers > budget)
    add(fmt::format("estimated {} registers per lane exceed the spill-safe budget {} on {} "
                    "(waves {})", t.estimated_registers, budget, an, c.waves));
  if (lim.nvidia && c.waves > 0 && t.threads * c.waves > lim.threads_per_sm)
    add(fmt::format("waves {} x {} threads exceed {} resident threads per SM", c.waves, t.threads, lim.threads_per_sm));
  // The SM reserves 1 KB of shared memory per resident CTA (Hopper: 228 KB in all).
  if (lim.nvidia && c.waves > 0 && (t.smem_bytes + lim.shared_reserved_per_cta) * c.waves > lim.shared_per_sm)
    add(fmt::format("waves {} CTAs of {} B shared memory exceed {} KB per SM", c.waves, t.smem_bytes,
                    lim.shared_per_sm / 1024));

  if (shape == nullptr) return;
  auto const& s = *shape;
  if (c.doweight_stage1 != s.doweight_stage1)
    add(fmt::format("doweight_stage1 {} does not match the shape's {}", c.doweight_stage1 ? 1 : 0, s.doweight_stage1 ? 1 : 0));
  if (c.stage == 1 && c.gate_up != s.gate_up)
    add(fmt::format("gate/up order {} does not match the shape's {}", moe::to_string(c.gate_up), moe::to_string(s.gate_up)));
  if (s.hidden % 32 != 0) add(fmt::format("model_dim {} is not a multiple of 32", s.hidden));
  if (s.inter % 32 != 0) add(fmt::format("inter_dim {} is not a multiple of 32", s.inter));
  if (s.experts > sort_max_experts)
    add(fmt::format("{} experts exceed the GPU sort's limit of {}", s.experts, sort_max_experts));
  std::int64_t const n = c.stage == 1 ? s.inter : s.hidden;
  std::int64_t const k = c.stage == 1 ? s.hidden : s.inter;
  if (c.block_n > n)
    add(fmt::format("block_n {} exceeds the output width {} ({}): the tile would be mostly idle",
                    c.block_n, n, c.stage == 1 ? "inter_dim" : "model_dim"));
  if (c.block_k > k && c.block_k > t.chunk)
    add(fmt::format("block_k {} exceeds the reduction length {}", c.block_k, k));
  if (c.ksplit > 1 && (k + c.block_k - 1) / c.block_k < c.ksplit)
    add(fmt::format("ksplit {} exceeds the {} block_k tiles of {} {}", c.ksplit, (k + c.block_k - 1) / c.block_k,
                    c.stage == 1 ? "model_dim" : "inter_dim", k));
}

// h kept in bf16 (`_hb`): an A8W4 pair's format of h. Its stage two is then checked as the
// A16W4 stage two it is compiled as (compiled_as), so only what the name itself says is checked
// here: the dtype, and the fp8 flavour of the arch, which the A16W4 rules do not look at.
template <class Add>
void h_bf16_rules(const KernelConfig& c, Arch arch, Add& add) {
  if (!c.h_bf16) return;
  if (c.dtype != DtypePath::a8w4) {
    add(fmt::format("h_bf16 1 with {}: only A8W4 has an fp8 h to keep in bf16 instead", moe::to_string(c.dtype)));
    return;
  }
  if (c.stage == 2) fp8_flavour_rules(c, arch, add);
}

// x read in bf16 (`_xb`): an A8W4 stage one whose first launch upcasts x to bf16, so its main
// loop is the A16W4 stage one's (compiled_as), checked by that kernel's rules; here what only
// the name says: stage one, A8W4, the arch's fp8 flavour (the upcast and the epilogue use it),
// and the wgmma main loop, the one whose w1 is prepared in A16W4's words for an A8W4 shape
// (the wgmma tiles; the other main loops are not built or measured with it).
template <class Add>
void x_bf16_rules(const KernelConfig& c, Arch arch, Add& add) {
  if (!c.x_bf16) return;
  if (c.stage != 1) {
    add("x_bf16 1 in stage two: only stage one reads x");
    return;
  }
  if (c.dtype != DtypePath::a8w4) {
    add(fmt::format("x_bf16 1 with {}: only A8W4 has fp8 activations to upcast", moe::to_string(c.dtype)));
    return;
  }
  if (!c.wgmma) add("x_bf16 1 needs the wgmma main loop (wgmma 1): its w1 is prepared in A16W4's tile words");
  fp8_flavour_rules(c, arch, add);
}

}  // namespace

std::vector<std::string> all_violations(const KernelConfig& cfg, Arch arch, const moe::MoeShape* shape) {
  std::vector<std::string> out;
  // The compiled kernel's rules, against the shape as that kernel sees it (an A8W4 stage two
  // keeping h in bf16 is the A16W4 stage two, an A8W4 stage one reading x in bf16 has the A16W4
  // stage one's main loop), then what only the name says.
  KernelConfig const kernel = compiled_as(cfg);
  std::optional<moe::MoeShape> kernel_shape;
  if (shape != nullptr) {
    kernel_shape = *shape;
    kernel_shape->dtype = kernel.dtype;
  }
  rules(kernel, arch, kernel_shape ? &*kernel_shape : nullptr, out);
  auto add = [&](std::string s) { out.push_back(std::move(s)); };
  if (shape != nullptr && cfg.dtype != shape->dtype)
    add(fmt::format("dtype path {} does not match the shape's {}", moe::to_string(cfg.dtype), moe::to_string(shape->dtype)));
  h_bf16_rules(cfg, arch, add);
  x_bf16_rules(cfg, arch, add);
  return out;
}

std::optional<std::string> pair_violation(const KernelConfig& stage1, const KernelConfig& stage2) {
  if (sort_block_m(stage1) != sort_block_m(stage2)) {
    if (stage2.sort_halves)
      return fmt::format("stage two reads the sort in halves of {} tokens, so its stage one's block_m must be {}, not {}",
                         stage2.block_m, sort_block_m(stage2), stage1.block_m);
    return fmt::format("the stages disagree on block_m ({} and {}): both read one sort", stage1.block_m,
                       stage2.block_m);
  }
  if (stage1.h_bf16 != stage2.h_bf16)
    return fmt::format("stage one writes h as {} but stage two reads {} (h_bf16 {} and {}): both stages keep h in bf16 "
                       "or neither",
                       stage1.h_bf16 ? "bf16" : "fp8 codes and scales", stage2.h_bf16 ? "bf16" : "fp8 codes and scales",
                       stage1.h_bf16 ? 1 : 0, stage2.h_bf16 ? 1 : 0);
  return std::nullopt;
}

std::optional<std::string> check_config(const KernelConfig& cfg, Arch arch) {
  auto v = all_violations(cfg, arch, nullptr);
  if (v.empty()) return std::nullopt;
  return v.front();
}

std::optional<std::string> check_config(const KernelConfig& cfg, Arch arch, const moe::MoeShape& shape) {
  auto v = all_violations(cfg, arch, &shape);
  if (v.empty()) return std::nullopt;
  return v.front();
}

}  // namespace moetune::search
