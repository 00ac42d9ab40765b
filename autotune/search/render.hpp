#pragma once
// Rendering one configuration into the tiny translation unit the JIT compiles, and the launch
// geometry of the kernels in it (computed on the host, in the order they run).
#include <cstdint>
#include <string>
#include <vector>

#include "autotune/jit/kernel_source.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::search {

// The TU instantiates exactly this configuration (kernels/moe_stage{1,2}.cuh) and also holds
// the companion kernels of its stage. kernel_names, in run order:
//   stage one:            moetune::moe_sort and moetune::moe_sort_multi (the one-CTA and the
//                         several-CTA sort: the launch plan runs one of them, by M),
//                         moetune::moe_stage1<...> (split over K: moetune::moe_stage1_ksplit<...>,
//                         a cluster of ksplit CTAs along z); reading x in bf16 (x_bf16) the
//                         sorts are moetune::moe_sort_upcast_x<F> and moe_sort_multi_upcast_x<F>
//                         (F: 1 e4m3fnuz, 0 OCP e4m3), which also write xb
//   stage two:            moetune::moe_stage2<...>, moetune::moe_reduce_y
// (The atomic stage two's accumulator is cleared by stage one: accumulator_words below.)
// The configuration must pass check_config() for the arch (render does not re-check).
[[nodiscard]] jit::KernelSource render(const KernelConfig& cfg, Arch arch);

// "moetune::MoeConfig<1,0,32,128,256,4,1,1,2,2,1,0,0,0,0,0,0,0,0,0,0>" — the template argument list of
// kernels/moe_config.cuh for this configuration on this arch.
[[nodiscard]] std::string config_type(const KernelConfig& cfg, Arch arch);

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

struct KernelLaunch {
  std::string kernel_name;  // one of KernelSource::kernel_names
  Dim3 grid;
  Dim3 block;
  std::uint32_t dynamic_shared_bytes = 0;  // > 48 KB needs the opt-in attribute on CUDA
};

struct LaunchPlan {
  std::vector<KernelLaunch> launches;  // in the order they run
  // Buffers the host allocates for this plan:
  std::int64_t sort_capacity = 0;      // sorted_slots entries; block_expert has capacity/block_m
  std::int64_t max_sorted_blocks = 0;  // grid.x of the stage kernels, grid.y tile-major (CTAs past num_blocks exit);
                                       // a stage two reading the sort in halves: two per sorted block
  std::int64_t partial_bytes = 0;      // stage two: fp32 [M*topk][H] (reduce) or acc [M][H] (atomic)
  // Atomic stage two: its accumulator acc[M][H] in 16-byte words, which stage one clears (the
  // stage-one kernel's acc_n16 argument); 0 for a reduce stage two.
  std::int64_t accumulator_words = 0;
  // Stage one's first launch: its first sort_ctas CTAs sort (moe::sort_ctas(M*topk), which the
  // kernel derives itself), then, where the stage one reads x in bf16 (xb[M][H], x_bf16_bytes;
  // 0 otherwise), upcast_ctas CTAs upcast x (that launch's upcast_ctas argument).
  std::int64_t sort_ctas = 0;
  std::int64_t x_bf16_bytes = 0;
  std::int64_t upcast_ctas = 0;
};

// The most sorted blocks of block_m slots that M tokens can fill (the stage kernels' grid over
// blocks; CTAs past the sort's num_blocks exit).
[[nodiscard]] std::int64_t max_sorted_blocks(const moe::MoeShape& shape, std::int64_t M, int block_m);

// The stage kernel's grid rows over the sorted blocks at M (LaunchPlan::max_sorted_blocks): the
// most blocks of the sort it reads (sort_block_m), two rows per block for a stage two reading
// the sort in halves.
[[nodiscard]] std::int64_t stage_grid_rows(const moe::MoeShape& shape, std::int64_t M, const KernelConfig& cfg);

// A grid's y holds at most this many CTAs, so a tile-major stage (KernelConfig::tile_major: the
// sorted blocks on y) launches at most this many blocks; plan_launch refuses more.
inline constexpr std::int64_t tile_major_max_blocks = 65535;

// Launch geometry for M tokens of the shape (shape.tokens is ignored; M is explicit because a
// bucket may be timed at another M).
[[nodiscard]] LaunchPlan plan_launch(const KernelConfig& cfg, Arch arch, const moe::MoeShape& shape,
                                     std::int64_t M);

}  // namespace moetune::search
