#include "autotune/runtime/prepared_layer.hpp"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "autotune/runtime/layer_key.hpp"
#include "autotune/runtime/runtime_error.hpp"

namespace moetune::runtime {
namespace {

gpu::Dim3 to_gpu(search::Dim3 d) { return gpu::Dim3{d.x, d.y, d.z}; }

KernelLaunch make_launch(const KernelLibrary& kernels, const search::KernelConfig& config,
                         const search::KernelLaunch& launch) {
  return KernelLaunch{kernels.kernel(config, launch), to_gpu(launch.grid), to_gpu(launch.block),
                      launch.dynamic_shared_bytes};
}

void run(const KernelLaunch& l, gpu::ExternalStream stream, void** args) {
  l.kernel.launch(l.grid, l.block, l.dynamic_shared_bytes, stream, args);
}

[[noreturn]] void fail(ErrorKind kind, const std::string& message) {
  throw RuntimeError(kind, message);
}

}  // namespace

PreparedLayer::PreparedLayer(const LayerSpec& layer, search::Arch arch,
                             std::vector<BucketChoice> choices, const KernelLibrary& kernels,
                             std::unique_ptr<PreparedWeights> weights)
    : m_spec(layer), m_weights(std::move(weights)) {
  for (auto& choice : choices) {
    auto plan = plan_bucket(choice, layer.shape, arch, layer.max_tokens);
    auto const& p1 = plan.stage1.launches;
    // stage one's unit: moe_sort, moe_stage1 (search/render.hpp)
    PreparedBucket b{choice,
                     plan,
                     choice.stage1.name(),
                     choice.stage2.name(),
                     make_launch(kernels, choice.stage1, p1.at(0)),
                     make_launch(kernels, choice.stage1, p1.at(1)),
                     {},
                     m_weights->w1(choice.stage1.repacked),
                     m_weights->w2(choice.stage2.repacked)};
    for (auto const& launch : plan.stage2.launches) {
      auto const part = launch.kernel_name == "moetune::moe_zero_y"     ? StageTwoPart::zero
                        : launch.kernel_name == "moetune::moe_reduce_y" ? StageTwoPart::reduce
                                                                         : StageTwoPart::stage;
      b.stage2.emplace_back(part, make_launch(kernels, choice.stage2, launch));
    }
    m_buckets.push_back(std::move(b));
  }
}

const PreparedBucket& PreparedLayer::bucket(std::int64_t tokens) const {
  if (tokens < 0 || tokens > m_spec.max_tokens) {
    fail(ErrorKind::invalid_argument,
         fmt::format("tokens={} is outside [0, {}], the layer's max_tokens", tokens,
                     m_spec.max_tokens));
  }
  return m_buckets[static_cast<std::size_t>(bucket_index(tokens))];
}

std::size_t PreparedLayer::workspace_bytes(std::int64_t tokens) const {
  // Bucket plans grow with the bucket, so the most any M up to `tokens` needs is its own.
  return bucket(tokens).plan.workspace.total;
}

void PreparedLayer::forward(const moetune_forward_args& a) const {
  auto const& shape = m_spec.shape;
  bool const a8w4 = shape.dtype == moe::DtypePath::a8w4;
  auto const& b = bucket(a.tokens);
  if (a.tokens == 0) return;
  if (a.hidden_states == nullptr || a.topk_ids == nullptr || a.topk_weights == nullptr ||
      a.output == nullptr || a.workspace == nullptr || (a8w4 && a.hidden_scales == nullptr)) {
    fail(ErrorKind::null_pointer,
         fmt::format("forward: {} is NULL",
                     a.hidden_states == nullptr  ? "hidden_states"
                     : a.topk_ids == nullptr     ? "topk_ids"
                     : a.topk_weights == nullptr ? "topk_weights"
                     : a.output == nullptr       ? "output"
                     : a.workspace == nullptr    ? "workspace"
                                                 : "hidden_scales (a8w4 needs the MXFP8 scales)"));
  }
  auto const& ws = b.plan.workspace;
  if (a.workspace_bytes < ws.total) {
    fail(ErrorKind::workspace,
         fmt::format("forward: {} tokens need a workspace of {} bytes, {} given "
                     "(moetune_workspace_size)",
                     a.tokens, ws.total, a.workspace_bytes));
  }
  if (reinterpret_cast<std::uintptr_t>(a.workspace) % workspace_alignment != 0) {
    fail(ErrorKind::workspace, fmt::format("forward: the workspace must be aligned to {} bytes",
                                           workspace_alignment));
  }
  auto* base = static_cast<std::byte*>(a.workspace);
  void* slots = base + ws.sorted_slots;
  void* block_expert = base + ws.block_expert;
  void* num_blocks = base + ws.num_blocks;
  void* h = base + ws.h;
  void* h_scales = a8w4 ? static_cast<void*>(base + ws.h_scales) : nullptr;
  void* partial = base + ws.partial;
  void* ids = const_cast<std::int32_t*>(a.topk_ids);
  void* weights = const_cast<float*>(a.topk_weights);
  void* x = const_cast<void*>(a.hidden_states);
  void* x_scales = a8w4 ? const_cast<void*>(a.hidden_scales) : nullptr;
  void* w1 = const_cast<void*>(b.w1);
  void* w2 = const_cast<void*>(b.w2);
  void* w1_scales = const_cast<void*>(m_weights->w1_scales());
  void* w2_scales = const_cast<void*>(m_weights->w2_scales());
  void* y = a.output;
  auto M = static_cast<std::int32_t>(a.tokens);
  auto topk = static_cast<std::int32_t>(shape.topk);
  auto experts = static_cast<std::int32_t>(shape.experts);
  auto H = static_cast<std::int32_t>(shape.hidden);
  auto I = static_cast<std::int32_t>(shape.inter);
  auto block_m = static_cast<std::int32_t>(b.choice.stage1.block_m);
  auto capacity = static_cast<std::int32_t>(b.plan.stage1.sort_capacity);
  gpu::ExternalStream const stream{a.stream};

  // The argument lists of kernels/moe_sort.cuh, moe_stage1.cuh, moe_stage2.cuh and
  // moe_aux.cuh, as exec::MoePipeline passes them.
  void* sort_args[] = {&ids, &M, &topk, &experts, &block_m, &capacity, &slots, &block_expert,
                       &num_blocks};
  run(b.sort, stream, sort_args);
  void* stage1_args[] = {&x, &x_scales, &w1, &w1_scales, &slots, &block_expert, &num_blocks,
                         &weights, &h, &h_scales, &M, &topk, &H, &I};
  run(b.stage1, stream, stage1_args);
  bool const atomic = b.choice.stage2.stage2_mode == search::Stage2Mode::atomic;
  for (auto const& [part, launch] : b.stage2) {
    switch (part) {
      case StageTwoPart::zero: {
        // The atomic accumulator acc[M][H] in fp32, as 16-byte words (search/render.cpp's
        // zero_y_words for this M); the grid-stride loop covers it with the bucket's grid.
        std::int64_t n16 = static_cast<std::int64_t>(a.tokens) * shape.hidden * 4 / 16;
        auto grid = static_cast<std::int32_t>(launch.grid.x);
        void* args[] = {&partial, &n16, &grid};
        run(launch, stream, args);
        break;
      }
      case StageTwoPart::stage: {
        void* args[] = {&h, &h_scales, &w2, &w2_scales, &slots, &block_expert, &num_blocks,
                        &weights, &y, &partial, &M, &topk, &H, &I};
        run(launch, stream, args);
        break;
      }
      case StageTwoPart::reduce: {
        // reduce: sums each token's topk partial rows; atomic: rounds acc[M][H] (one row each).
        std::int32_t rows = atomic ? 1 : topk;
        void* args[] = {&partial, &y, &M, &rows, &H};
        run(launch, stream, args);
        break;
      }
    }
  }
}

}  // namespace moetune::runtime
