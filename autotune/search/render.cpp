#include "autotune/search/render.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/moe/sorting.hpp"
#include "autotune/search/kernel_traits.hpp"

namespace moetune::search {
namespace {

constexpr std::uint32_t sort_threads = 512;  // kernels/moe_sort.cuh
constexpr std::uint32_t aux_threads = 256;   // kernels/moe_aux.cuh

int dtype_index(DtypePath d) {
  switch (d) {
    case DtypePath::a16w4: return 0;
    case DtypePath::a8w4: return 1;
    case DtypePath::bf16: return 2;
  }
  return 0;
}

// Stage one's split-K has its own entry point (its cluster shape is part of the kernel).
bool stage1_ksplit(const KernelConfig& cfg) { return cfg.stage == 1 && cfg.ksplit > 1; }

std::string stage_kernel(const KernelConfig& cfg, Arch arch) {
  return fmt::format("moetune::moe_stage{}{}<{}>", cfg.stage, stage1_ksplit(cfg) ? "_ksplit" : "",
                     config_type(cfg, arch));
}

// The kernels' Fnuz template argument: 1 for the fnuz e4m3 flavour (gfx942), 0 for OCP's.
int fnuz_argument(const KernelConfig& cfg) { return cfg.fp8 == Fp8Flavor::fnuz ? 1 : 0; }

// The first launch of stage one: the sort, or with x_bf16 the sort plus x's upcast; in one CTA
// or, `multi`, in several (kernels/moe_sort.cuh: the two forms are two kernels, so that the
// one-CTA sort keeps its own registers and LDS).
std::string sort_kernel(const KernelConfig& cfg, bool multi) {
  if (!(cfg.stage == 1 && cfg.x_bf16)) return multi ? "moetune::moe_sort_multi" : "moetune::moe_sort";
  return fmt::format("moetune::moe_sort{}_upcast_x<{}>", multi ? "_multi" : "", fnuz_argument(cfg));
}

// x's upcast runs in at most this many CTAs beside the sort's: four of 512 threads per SM of
// an H100 SXM / H200 (132 SMs, 2048 threads each). Only a cap: each CTA loops over its share,
// so a part with fewer SMs loops a little more and stays correct.
constexpr std::int64_t max_upcast_ctas = 4 * 132;

}  // namespace

std::string config_type(const KernelConfig& config, Arch arch) {
  // Order: Stage, Dtype, BM, BN, BK, Warps, KPack, Path, Waves, Stages, KSplit, GateSeparated,
  // DoWeight, Fp8, Reduce, Mainloop (kernels/moe_config.cuh: 0 registers, 1 swapped, 2 staged,
  // 3 staged with fragment decode, 4 wgmma, 5 wgmma with the k16 decode, 6 with the k32 one),
  // WLayout (0 natural MXFP4, 1 repacked, 2 wgmma tiles), HBf16 (an A8W4 stage one that
  // writes h as bf16), XBf16 (an A8W4 stage one reading x in bf16, compiled with dtype A16W4),
  // TileMajor, SortHalves (a stage two reading the sort's blocks in halves).
  // Every parameter is spelled out: hipRTC (HIP 5.2) does not match a name expression that
  // leaves a defaulted one out. An A8W4 stage two reading bf16 h is compiled as the A16W4
  // stage two (compiled_as).
  KernelConfig const c = compiled_as(config);
  bool const s1 = c.stage == 1;
  auto const layout = weight_layout(c);
  bool const a8w4_epilogue = c.dtype == DtypePath::a8w4 || (s1 && c.x_bf16);
  return fmt::format("moetune::MoeConfig<{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}>", c.stage,
                     dtype_index(c.dtype), c.block_m, c.block_n, c.block_k, c.warps, c.kpack,
                     static_cast<int>(mma_path(c, arch)), c.waves, c.stages, std::max(1, c.ksplit),
                     s1 && c.gate_up == GateUpLayout::separated ? 1 : 0, c.doweight_stage1 ? 1 : 0,
                     a8w4_epilogue ? fnuz_argument(c) : 0,
                     !s1 && c.stage2_mode == Stage2Mode::reduce ? 1 : 0,
                     c.swap_ab ? 1 : c.staged ? (c.fragment_decode ? 3 : 2) : c.wgmma ? (c.gemv ? 7 : c.wgmma_k16 ? 5 : c.wgmma_k32 ? 6 : 4) : 0,
                     layout == WeightLayout::wgmma_tiles_a16w4 ? static_cast<int>(WeightLayout::wgmma_tiles)
                                                               : static_cast<int>(layout),
                     s1 && c.h_bf16 ? 1 : 0, s1 && c.x_bf16 ? 1 : 0, c.tile_major ? 1 : 0,
                     !s1 && c.sort_halves ? 1 : 0);
}

jit::KernelSource render(const KernelConfig& cfg, Arch arch) {
  jit::KernelSource out;
  out.unit_name = cfg.name();
  auto const type = config_type(cfg, arch);
  std::string src = fmt::format("// moe-tune candidate {} for {} ({})\n", out.unit_name,
                                to_string(arch), to_string(mma_path(cfg, arch)));
  if (cfg.stage == 1) {
    src += cfg.x_bf16 ? "#include \"moe_upcast_x.cuh\"\n" : "#include \"moe_sort.cuh\"\n";
    src += "#include \"moe_stage1.cuh\"\n";
    if (cfg.x_bf16)
      src += fmt::format("MOETUNE_INSTANTIATE_SORT_UPCAST_X({});\n", fnuz_argument(cfg));
    src += fmt::format("MOETUNE_INSTANTIATE_STAGE1{}({});\n", stage1_ksplit(cfg) ? "_KSPLIT" : "", type);
    out.kernel_names = {sort_kernel(cfg, false), sort_kernel(cfg, true), stage_kernel(cfg, arch)};
    out.primary_kernel = 2;
  } else {
    src += "#include \"moe_aux.cuh\"\n#include \"moe_stage2.cuh\"\n";
    src += fmt::format("MOETUNE_INSTANTIATE_STAGE2({});\n", type);
    out.kernel_names = {stage_kernel(cfg, arch), "moetune::moe_reduce_y"};
  }
  out.source = std::move(src);
  return out;
}

std::int64_t max_sorted_blocks(const moe::MoeShape& shape, std::int64_t M, int block_m) {
  std::int64_t const slots = M * shape.topk;
  std::int64_t const bm = block_m;
  // num_blocks <= (slots + min(E, slots) * (bm-1)) / bm: a much tighter grid than
  // capacity/bm at decode sizes, where most experts receive nothing.
  std::int64_t const touched = std::min<std::int64_t>(shape.experts, slots);
  return std::max<std::int64_t>(
      1, std::min(moe::sort_capacity(M, shape.topk, shape.experts, block_m) / bm, (slots + touched * (bm - 1)) / bm));
}

std::int64_t stage_grid_rows(const moe::MoeShape& shape, std::int64_t M, const KernelConfig& cfg) {
  int const sort_bm = sort_block_m(cfg);
  return max_sorted_blocks(shape, M, sort_bm) * (sort_bm / cfg.block_m);
}

LaunchPlan plan_launch(const KernelConfig& cfg, Arch arch, const moe::MoeShape& shape, std::int64_t M) {
  LaunchPlan plan;
  auto const t = kernel_traits(cfg, arch);
  // The one capacity rule, shared with the CPU reference's sort (moe/sorting.hpp).
  // A stage two reading the sort in halves (sort_halves) reads its stage one's sort of
  // sort_block_m tokens a block (stage_grid_rows: two grid rows per sorted block).
  plan.sort_capacity = moe::sort_capacity(M, shape.topk, shape.experts, sort_block_m(cfg));
  plan.max_sorted_blocks = stage_grid_rows(shape, M, cfg);
  if (cfg.tile_major && plan.max_sorted_blocks > tile_major_max_blocks)
    throw Error(fmt::format("{}: {} sorted blocks at M = {} exceed a tile-major grid's {} rows", cfg.name(),
                            plan.max_sorted_blocks, M, tile_major_max_blocks));
  auto const blocks = static_cast<std::uint32_t>(plan.max_sorted_blocks);
  auto const tiles =
      static_cast<std::uint32_t>(((cfg.stage == 1 ? shape.inter : shape.hidden) + cfg.block_n - 1) / cfg.block_n);
  auto const splits = static_cast<std::uint32_t>(std::max(1, cfg.ksplit));
  auto const stage = KernelLaunch{
      stage_kernel(cfg, arch),
      cfg.tile_major ? Dim3{tiles, blocks, splits} : Dim3{blocks, tiles, splits},
      Dim3{static_cast<std::uint32_t>(t.threads), 1, 1}, static_cast<std::uint32_t>(t.smem_bytes)};
  if (cfg.stage == 1) {
    if (cfg.x_bf16) {
      // x's upcast: 16 codes per thread and step, each CTA looping over its share.
      std::int64_t const groups = M * shape.hidden / 16;
      plan.upcast_ctas = std::clamp<std::int64_t>((groups + sort_threads - 1) / sort_threads, 1, max_upcast_ctas);
      plan.x_bf16_bytes = M * shape.hidden * 2;
    }
    // The sort's CTAs first (as many as kernels/moe_sort.cuh derives from M*topk; one CTA: the
    // one-CTA kernel), then x's upcast.
    plan.sort_ctas = moe::sort_ctas(M * shape.topk);
    plan.launches.push_back({sort_kernel(cfg, plan.sort_ctas > 1),
                             Dim3{static_cast<std::uint32_t>(plan.sort_ctas + plan.upcast_ctas), 1, 1},
                             Dim3{sort_threads, 1, 1}, 0});
    plan.launches.push_back(stage);
  } else {
    // Both stage-two modes end in moe_reduce_y: reduce sums each token's topk fp32 partial
    // rows; atomic rounds its fp32 accumulator acc[M][H] (topk = 1), which stage one clears.
    bool const atomic = cfg.stage2_mode == Stage2Mode::atomic;
    plan.partial_bytes = (atomic ? M : M * shape.topk) * shape.hidden * 4;
    if (atomic) plan.accumulator_words = plan.partial_bytes / 16;
    plan.launches.push_back(stage);
    auto const grid = std::max<std::int64_t>(1, (M * shape.hidden / 4 + aux_threads - 1) / aux_threads);
    plan.launches.push_back({"moetune::moe_reduce_y", Dim3{static_cast<std::uint32_t>(grid), 1, 1}, Dim3{aux_threads, 1, 1}, 0});
  }
  return plan;
}

}  // namespace moetune::search
