#include "autotune/search/kernel_traits.hpp"

#include <algorithm>

namespace moetune::search {

std::string_view to_string(MmaPath path) {
  switch (path) {
    case MmaPath::fma: return "fma";
    case MmaPath::sm80: return "mma.sync.m16n8k16.bf16";
    case MmaPath::mfma16: return "v_mfma_f32_16x16x16bf16_1k";
    case MmaPath::mfma32: return "v_mfma_f32_32x32x8bf16_1k";
    case MmaPath::smfma16: return "v_mfma_scale_f32_16x16x128_f8f6f4";
    case MmaPath::smfma32: return "v_mfma_scale_f32_32x32x64_f8f6f4";
  }
  return "?";
}

MmaPath mma_path(const KernelConfig& config, Arch arch) {
  KernelConfig const cfg = compiled_as(config);
  if (cfg.nonkdim == 0) return MmaPath::fma;
  if (arch == Arch::sm_90) return MmaPath::sm80;
  // Swapped operands decode both sides to bf16 (the activations too on gfx950's A8W4).
  if (cfg.swap_ab) return MmaPath::mfma16;
  bool const big = cfg.nonkdim == 32;
  if (arch == Arch::gfx950 && cfg.dtype == DtypePath::a8w4) return big ? MmaPath::smfma32 : MmaPath::smfma16;
  return big ? MmaPath::mfma32 : MmaPath::mfma16;
}

namespace {

// kernels/moe_config.cuh's sw_* quantities and kernels/moe_swap_gemm.cuh's register use.
KernelTraits swapped_traits(const KernelConfig& c, KernelTraits t) {
  bool const sm80 = t.path == MmaPath::sm80;
  bool const w_bf16 = c.dtype == DtypePath::bf16;
  t.tokens_per_frag = sm80 ? 8 : 16;
  t.rows_per_lane = sm80 ? 2 : 1;
  int const row_frags = t.nv / 16;
  t.warps_n = std::max(1, std::min(c.warps, row_frags));
  t.warps_k = std::max(1, c.warps / t.warps_n);
  t.warps_m = 1;
  t.mt = c.block_m / t.tokens_per_frag;
  t.nt = row_frags / t.warps_n;
  t.warp_rows = c.block_m;
  t.a_row_bytes = 0;
  // The copy ring (kernels/moe_config.cuh sw_ring_bytes), then the C tiles reuse it.
  int const chunks = t.chunk > 0 ? c.block_k / t.chunk : 1;
  bool const a_fp8 = c.dtype == DtypePath::a8w4;
  int const vecs = chunks * (t.nt * t.rows_per_lane * (w_bf16 ? 4 : 1) + t.mt * (a_fp8 ? 2 : 4));
  int const words = chunks * ((w_bf16 ? 0 : t.nt * t.rows_per_lane) + (a_fp8 ? t.mt : 0));
  int const ws = t.threads / std::max(1, c.warps);
  t.a_bytes = c.warps * c.stages * ws * (vecs * 16 + words * 4);
  t.c_bytes = t.warps_k * c.block_m * (t.nv + 4) * 4;
  t.smem_bytes = std::max(t.a_bytes, t.c_bytes) + c.block_m * 4;
  t.a_vecs_per_thread = 0;
  // kernels/moe_config.cuh's sw_chains: one or two tiles per warp alternate between 4 or 2
  // accumulator sets.
  int const chains = t.mt * t.nt == 1 ? 4 : t.mt * t.nt == 2 ? 2 : 1;
  t.accumulators = t.mt * t.nt * 4 * chains;
  // Per lane: accumulators; one chunk of activations (16 words per token fragment) and the
  // decoded weight runs; a piece being read; ~24 for addresses and ring indices. Nothing is
  // held across tiles: the ring is in LDS. A lower bound rather than an estimate (ptxas used
  // 95-118 where this gives 84): the spill report of the compile step has the last word.
  t.estimated_registers = t.accumulators + 16 * t.mt + 16 * t.rows_per_lane + 8 + 24;
  return t;
}

// kernels/moe_config.cuh's st_* quantities and kernels/moe_staged_gemm.cuh's register use.
KernelTraits staged_traits(const KernelConfig& c, KernelTraits t) {
  bool const a_fp8 = c.dtype == DtypePath::a8w4;
  int const a_row = a_fp8 ? c.block_k : 2 * c.block_k;
  int const a_pieces = c.block_m * (a_row / 16);
  int const w_pieces = t.nv * (c.block_k / 32);
  int const stage_bytes = (c.block_m * a_row + (a_fp8 ? a_pieces * 4 : 0) + w_pieces * 20 + 255) / 256 * 256;
  t.a_row_bytes = 2 * c.block_k;
  // The decoded tiles (double-buffered) exist only without fragment decode.
  t.a_bytes = c.stages * stage_bytes +
              (c.fragment_decode ? 0 : 2 * t.nv * c.block_k * 2 + (a_fp8 ? 2 * c.block_m * c.block_k * 2 : 0));
  t.smem_bytes = std::max(t.a_bytes, t.c_bytes) + c.block_m * 4;
  int const threads = std::max(1, t.threads);
  int const a_per_thread = (a_pieces + threads - 1) / threads;
  t.a_vecs_per_thread = a_per_thread;
  // Per lane: accumulators; one k16 step's fragments (4 words per m fragment, 2 per n
  // fragment); part of a decoded piece; ~24 for offsets and loop state. A lower bound, as for
  // the swapped kernels (ptxas used 96-255 where this gives 68-200): copy sources the
  // compiler keeps or rematerialises vary, and the compile step's spill report decides.
  t.estimated_registers = t.accumulators + 4 * t.mt + 2 * t.nt + 16 + 24;
  // Fragment decode holds a piece's fragments: 8 words of A per m fragment, 4 of B per n.
  if (c.fragment_decode) t.estimated_registers = t.accumulators + 8 * t.mt + 4 * t.nt + 24;
  return t;
}

// kernels/moe_config.cuh's wg_* quantities and kernels/moe_wgmma_gemm.cuh's register use.
KernelTraits wgmma_traits(const KernelConfig& c, KernelTraits t) {
  bool const a_fp8 = c.dtype == DtypePath::a8w4;
  int const b_bytes = c.block_m * c.block_k * (a_fp8 ? 1 : 2);
  int const w_bytes = t.nv * c.block_k / 2;
  int const s_bytes = t.nv * c.block_k / 32;
  int const as_bytes = a_fp8 ? c.block_m * c.block_k / 32 : 0;
  // A stage's token rows 1024-aligned, its weight part 128-aligned (kept apart in the ring).
  int const stage_bytes = (b_bytes + 1023) / 1024 * 1024 + (w_bytes + s_bytes + as_bytes + 127) / 128 * 128;
  // One 16-row fragment per warp; the C tile (token-major, fp32) reuses the ring.
  t.warps_m = 1;
  t.warps_n = c.warps;
  t.warp_rows = 16;
  t.mt = 1;
  t.nt = 1;
  t.a_row_bytes = 0;
  t.a_bytes = c.stages * stage_bytes + 1024;  // 1 KB spare aligns the ring to the swizzle atoms
  t.c_bytes = c.block_m * (t.nv + 4) * 4;
  t.smem_bytes = std::max(t.a_bytes, t.c_bytes) + c.block_m * 4;
  int const threads = std::max(1, t.threads);
  t.a_vecs_per_thread = (c.block_m * c.block_k * (a_fp8 ? 1 : 2) / 16 + threads - 1) / threads;
  // wgmma's D: 64 x block_m fp32 per warpgroup, block_m / 2 per lane; a8w4 adds two scratch
  // sums of the same size.
  t.accumulators = c.block_m / 2;
  // Per lane: accumulators (and scratch sums); two 64-K steps of A registers (16 words each,
  // a8w4: two k32 steps of 4, the k16 decode two k16 steps of 4, the k32 decode two of 8); 4 per token piece it copies (its source offset and stage place,
  // 32 bits each, and their address temporaries); ~24 for loop state. A lower bound: ptxas's
  // report decides (compile step).
  int const a_regs = a_fp8 || c.wgmma_k16 ? 8 : c.wgmma_k32 ? 16 : 32;
  t.estimated_registers = t.accumulators * (a_fp8 ? 3 : 1) + a_regs + 4 * t.a_vecs_per_thread + 24;
  return t;
}

// kernels/moe_config.cuh's gv_* quantities and kernels/moe_gemv_gemm.cuh's register use.
KernelTraits gemv_traits(const KernelConfig& c, KernelTraits t) {
  // One 16-row fragment per CTA; the warps split K.
  t.warps_m = 1;
  t.warps_n = 1;
  t.warp_rows = 16;
  t.mt = 1;
  t.nt = 1;
  t.a_row_bytes = 0;
  t.a_vecs_per_thread = 0;
  t.c_bytes = c.block_m * (t.nv + 4) * 4;
  // After the C tile: every warp's partial sums, [warp][token][16 rows] in fp32.
  t.a_bytes = (t.c_bytes + 15) / 16 * 16 + c.warps * c.block_m * 16 * 4;
  t.smem_bytes = std::max(t.a_bytes, t.c_bytes) + c.block_m * 4;
  int const groups = c.block_m / 8;
  t.accumulators = 4 * groups;
  // Per lane: accumulators; a k-tile's weight pieces and scale words (5 per 64 K), all loaded
  // at once; one 64-K piece decoded (16); a k16 step's token pairs per group (2); ~24 for
  // addresses and the loop. A lower bound: ptxas's report decides (compile step).
  t.estimated_registers = t.accumulators + 5 * (c.block_k / 64) + 16 + 2 * groups + 24;
  return t;
}

}  // namespace

KernelTraits kernel_traits(const KernelConfig& config, Arch arch) {
  KernelConfig const c = compiled_as(config);  // A16W4's main loop for an _hb stage two, an _xb stage one
  KernelTraits t{};
  t.path = mma_path(c, arch);
  int const ws = limits(arch).warp_size;
  switch (t.path) {
    case MmaPath::fma: t.fw = ws, t.lpr = 1, t.mh = 1, t.acc = 1; break;
    case MmaPath::sm80: t.fw = 8, t.lpr = 4, t.mh = 16, t.acc = 4; break;
    case MmaPath::mfma16:
    case MmaPath::smfma16: t.fw = 16, t.lpr = 4, t.mh = 16, t.acc = 4; break;
    case MmaPath::mfma32:
    case MmaPath::smfma32: t.fw = 32, t.lpr = 2, t.mh = 32, t.acc = 16; break;
  }
  bool const scaled = t.path == MmaPath::smfma16 || t.path == MmaPath::smfma32;
  bool const a_fp8 = c.dtype == DtypePath::a8w4;
  bool const w_bf16 = c.dtype == DtypePath::bf16;
  t.threads = c.warps * ws;
  t.nv = c.stage == 1 ? 2 * c.block_n : c.block_n;
  t.warps_m = c.block_m > 64 ? c.block_m / 64 : 1;
  t.warps_n = std::max(1, c.warps / std::max(1, t.warps_m));
  t.warp_rows = c.block_m / std::max(1, t.warps_m);
  t.mt = t.warp_rows / t.mh;
  t.nt = t.nv / (t.fw * t.warps_n);
  t.run = 32 * c.kpack;
  t.chunk = t.run * t.lpr;
  t.a_row_bytes = scaled ? c.block_k + 16 : 2 * c.block_k + 16;
  t.a_bytes = c.block_m * t.a_row_bytes + (scaled ? c.block_m * (c.block_k / 32) : 0);
  t.c_bytes = c.block_m * (t.nv + 4) * 4;
  t.smem_bytes = std::max(t.a_bytes, t.c_bytes) + c.block_m * 4;
  int const a_vec_elems = a_fp8 ? 16 : 8;
  int const a_vecs = c.block_m * (c.block_k / a_vec_elems);
  t.a_vecs_per_thread = t.threads > 0 ? (a_vecs + t.threads - 1) / t.threads : 0;
  t.accumulators = t.mt * t.nt * t.acc;
  if (c.swap_ab) return swapped_traits(c, t);
  if (c.wgmma && c.gemv) return gemv_traits(c, t);
  if (c.wgmma) return wgmma_traits(c, t);
  if (c.staged) return staged_traits(c, t);
  // Per lane: accumulators; raw weight fragments of all n fragments (issued together); one
  // decoded run; the A prefetch registers when stages >= 2; ~40 for addresses and indices.
  int const pieces = w_bf16 ? 4 * c.kpack : c.kpack;
  // stages 3 holds a whole k-tile of fragments twice (the tile computing, the next arriving).
  int const chunk_raw = t.nt * (pieces * 4 + (w_bf16 ? 0 : c.kpack));
  int const chunks = t.chunk > 0 ? c.block_k / t.chunk : 1;
  int const raw = c.stages == 3 ? 2 * chunks * chunk_raw : chunk_raw;
  int const decoded = scaled ? 8 : 16 * c.kpack;
  int const prefetch = c.stages > 1 ? t.a_vecs_per_thread * (4 + (a_fp8 ? 1 : 0)) : 0;
  // The compilers keep a chunk's A fragments live across the n fragments (they are the same
  // for every n): steps x mt x (4 words on sm80, 2 on MFMA; 8 for the scaled MFMA). Not with
  // one n fragment (nothing to share), nor on the FMA path (broadcast scalar reads).
  int const steps = scaled ? 1 : t.run / 4;
  int const a_words = scaled ? 8 : (t.path == MmaPath::sm80 ? 4 : 2);
  int const a_frags = (t.nt > 1 && t.path != MmaPath::fma) ? steps * t.mt * a_words : 0;
  t.estimated_registers = t.accumulators + raw + decoded + prefetch + a_frags + 40;
  return t;
}

}  // namespace moetune::search
