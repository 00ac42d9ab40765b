#include "autotune/runtime/bucket_plan.hpp"

#include <algorithm>

namespace moetune::runtime {
namespace {

// Appends `bytes` at the next aligned offset and returns that offset.
std::size_t place(std::size_t& end, std::int64_t bytes) {
  std::size_t const offset = (end + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
  end = offset + static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0));
  return offset;
}

}  // namespace

BucketPlan plan_bucket(const BucketChoice& choice, const moe::MoeShape& shape, search::Arch arch,
                       std::int64_t max_tokens) {
  BucketPlan plan;
  plan.planned_tokens = std::min(choice.tokens, max_tokens);
  plan.stage1 = search::plan_launch(choice.stage1, arch, shape, plan.planned_tokens);
  plan.stage2 = search::plan_launch(choice.stage2, arch, shape, plan.planned_tokens);
  // The same buffers and sizes exec::MoePipeline allocates for one M.
  auto const capacity = plan.stage1.sort_capacity;
  auto const slots = plan.planned_tokens * shape.topk;
  bool const fp8_h = search::h_is_fp8(choice.stage1);
  auto& w = plan.workspace;
  std::size_t end = 0;
  w.sorted_slots = place(end, capacity * 4);
  w.block_expert = place(end, capacity / choice.stage1.block_m * 4);
  w.num_blocks = place(end, 4);
  w.h = place(end, slots * shape.inter * (fp8_h ? 1 : 2));
  w.h_scales = place(end, fp8_h ? slots * shape.inter / 32 : 0);
  w.partial = place(end, plan.stage2.partial_bytes);
  w.x_bf16 = place(end, plan.stage1.x_bf16_bytes);
  w.total = (end + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
  return plan;
}

}  // namespace moetune::runtime
