#pragma once
// The launch geometry and workspace of one bucket, computed at prepare time so that forward
// does no planning. The plans are made for the bucket's largest M (its token count, capped at
// the layer's max_tokens) and serve every smaller M of the bucket unchanged: the stage kernels
// exit past the sort's num_blocks, the sort fills the whole (larger) capacity with padding,
// stage one clears and the reduce kernel rounds only the M they are given.
#include <cstddef>
#include <cstdint>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/runtime/bucket_choice.hpp"
#include "autotune/search/render.hpp"

namespace moetune::runtime {

inline constexpr std::size_t workspace_alignment = 256;  // MOETUNE_WORKSPACE_ALIGNMENT

// Byte offsets of the pipeline's scratch buffers inside the caller's workspace, each aligned
// to workspace_alignment (docs/kernel-contract.md names the buffers).
struct WorkspaceLayout {
  std::size_t sorted_slots = 0;
  std::size_t block_expert = 0;
  std::size_t num_blocks = 0;
  std::size_t h = 0;
  std::size_t h_scales = 0;  // A8W4 only (0 bytes otherwise)
  std::size_t partial = 0;   // stage two's fp32 accumulator or partial rows
  std::size_t x_bf16 = 0;    // x upcast to bf16 (a stage one with x_bf16; 0 bytes otherwise)
  std::size_t total = 0;     // bytes the workspace must have
};

struct BucketPlan {
  std::int64_t planned_tokens = 0;  // the M the plans below were made for
  search::LaunchPlan stage1, stage2;
  WorkspaceLayout workspace;
};

[[nodiscard]] BucketPlan plan_bucket(const BucketChoice& choice, const moe::MoeShape& shape,
                                     search::Arch arch, std::int64_t max_tokens);

}  // namespace moetune::runtime
