#include "autotune/runtime/prepared_layer.hpp"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "autotune/runtime/layer_key.hpp"
#include "autotune/runtime/runtime_error.hpp"

namespace moetune::runtime {
namespace {

gpu::Dim3 to_gpu(search::Dim3 d) { return gpu::Dim3{d.x, d.y, d.z}; }

ArgList arg_list_of(const std::string& kernel_name, bool stage_one, std::size_t index) {
  // stage one's unit: moe_sort (or moe_sort_upcast_x), moe_stage1 (search/render.hpp)
  if (stage_one) return index == 0 ? ArgList::sort : ArgList::stage1;
  return kernel_name == "moetune::moe_reduce_y" ? ArgList::reduce : ArgList::stage2;
}

[[noreturn]] void fail(ErrorKind kind, const std::string& message) {
  throw RuntimeError(kind, message);
}

}  // namespace

PreparedLayer::PreparedLayer(const LayerSpec& layer, search::Arch arch,
                             std::vector<BucketChoice> choices, const KernelLibrary& kernels,
                             std::unique_ptr<PreparedWeights> weights)
    : m_spec(layer),
      m_a8w4(layer.shape.dtype == moe::DtypePath::a8w4),
      m_weights(std::move(weights)) {
  auto const& shape = layer.shape;
  for (auto& choice : choices) {
    auto plan = plan_bucket(choice, shape, arch, layer.max_tokens);
    PreparedBucket b;
    b.choice = choice;
    b.plan = plan;
    b.stage1_name = choice.stage1.name();
    b.stage2_name = choice.stage2.name();
    // Everything about a launch that does not depend on the call is resolved here, once: the
    // driver's function handle, the geometry and which argument list the kernel takes (the
    // name comparisons forward would otherwise repeat per call).
    auto add = [&](const search::KernelConfig& config, const search::KernelLaunch& launch,
                   bool stage_one, std::size_t index) {
      b.launches.push_back(KernelLaunch{kernels.kernel(config, launch), to_gpu(launch.grid),
                                        to_gpu(launch.block), launch.dynamic_shared_bytes,
                                        arg_list_of(launch.kernel_name, stage_one, index)});
    };
    auto const& p1 = plan.stage1.launches;
    add(choice.stage1, p1.at(0), true, 0);
    add(choice.stage1, p1.at(1), true, 1);
    for (std::size_t i = 0; i < plan.stage2.launches.size(); ++i) {
      add(choice.stage2, plan.stage2.launches[i], false, i);
    }
    // The argument template: the bucket's weights and scalars, as exec::MoePipeline passes them.
    auto& v = b.args;
    auto const l1 = search::weight_layout(choice.stage1), l2 = search::weight_layout(choice.stage2);
    v.w1 = const_cast<void*>(m_weights->codes(1, l1));
    v.w2 = const_cast<void*>(m_weights->codes(2, l2));
    v.w1_scales = const_cast<void*>(m_weights->scales(1, l1));
    v.w2_scales = const_cast<void*>(m_weights->scales(2, l2));
    v.topk = static_cast<std::int32_t>(shape.topk);
    v.experts = static_cast<std::int32_t>(shape.experts);
    v.hidden = static_cast<std::int32_t>(shape.hidden);
    v.inter = static_cast<std::int32_t>(shape.inter);
    v.block_m = static_cast<std::int32_t>(choice.stage1.block_m);
    v.capacity = static_cast<std::int32_t>(plan.stage1.sort_capacity);
    v.reduce_rows = choice.stage2.stage2_mode == search::Stage2Mode::atomic ? 1 : v.topk;
    // Stage one clears an atomic stage two's accumulator over its whole grid (its CTAs' linear
    // index needs grid.x); search/render.cpp's accumulator_words for M tokens is acc[M][H] in
    // 16-byte words.
    auto const& g1 = p1.at(1).grid;
    v.stage1_grid_x = static_cast<std::int32_t>(g1.x);
    v.stage1_ctas = static_cast<std::int32_t>(g1.x * g1.y * g1.z);
    v.upcast_ctas = static_cast<std::int32_t>(plan.stage1.upcast_ctas);
    b.accumulator_words_per_token =
        choice.stage2.stage2_mode == search::Stage2Mode::atomic ? shape.hidden * 4 / 16 : 0;
    m_buckets.push_back(std::move(b));
  }
}

// The argument lists of kernels/moe_sort.cuh, moe_stage1.cuh, moe_stage2.cuh and moe_aux.cuh
// in their parameter order (as exec::MoePipeline passes them), pointing into m_v.
ForwardLaunches::ForwardLaunches(const PreparedBucket& b, const moetune_forward_args& a,
                                 bool a8w4)
    : m_bucket(&b),
      m_stream{a.stream},
      m_v(b.args),
      m_sort{&m_v.ids,       &m_v.M,     &m_v.topk,     &m_v.experts, &m_v.block_m,
             &m_v.capacity,  &m_v.slots, &m_v.block_expert, &m_v.num_blocks, &m_v.x,
             &m_v.x_scales,  &m_v.x_bf16, &m_v.hidden,  &m_v.upcast_ctas},
      m_stage1{&m_v.stage1_x, &m_v.stage1_x_scales, &m_v.w1, &m_v.w1_scales, &m_v.slots, &m_v.block_expert,
               &m_v.num_blocks, &m_v.weights, &m_v.h, &m_v.h_scales, &m_v.M, &m_v.topk,
               &m_v.hidden, &m_v.inter, &m_v.partial, &m_v.accumulator_words, &m_v.stage1_grid_x,
               &m_v.stage1_ctas},
      m_stage2{&m_v.h, &m_v.h_scales, &m_v.w2, &m_v.w2_scales, &m_v.slots, &m_v.block_expert,
               &m_v.num_blocks, &m_v.weights, &m_v.y, &m_v.partial, &m_v.M, &m_v.topk,
               &m_v.hidden, &m_v.inter},
      m_reduce{&m_v.partial, &m_v.y, &m_v.M, &m_v.reduce_rows, &m_v.hidden} {
  // Only the call's pointers and M are patched in; the rest came with the bucket's template.
  auto const& ws = b.plan.workspace;
  auto* base = static_cast<std::byte*>(a.workspace);
  m_v.x = const_cast<void*>(a.hidden_states);
  m_v.x_scales = a8w4 ? const_cast<void*>(a.hidden_scales) : nullptr;
  m_v.ids = const_cast<std::int32_t*>(a.topk_ids);
  m_v.weights = const_cast<float*>(a.topk_weights);
  m_v.y = a.output;
  m_v.slots = base + ws.sorted_slots;
  m_v.block_expert = base + ws.block_expert;
  m_v.num_blocks = base + ws.num_blocks;
  m_v.h = base + ws.h;
  m_v.h_scales = search::h_is_fp8(b.choice.stage1) ? static_cast<void*>(base + ws.h_scales) : nullptr;
  m_v.partial = base + ws.partial;
  bool const x_bf16 = b.plan.stage1.x_bf16_bytes > 0;
  m_v.x_bf16 = x_bf16 ? static_cast<void*>(base + ws.x_bf16) : nullptr;
  m_v.stage1_x = x_bf16 ? m_v.x_bf16 : m_v.x;
  m_v.stage1_x_scales = x_bf16 ? nullptr : m_v.x_scales;
  m_v.M = static_cast<std::int32_t>(a.tokens);
  m_v.accumulator_words = static_cast<std::int64_t>(a.tokens) * b.accumulator_words_per_token;
}

void ForwardLaunches::enqueue(gpu::LaunchOrder order) const {
  auto const& b = *m_bucket;
  for (auto const& l : b.launches) {
    void** args = nullptr;
    switch (l.args) {
      case ArgList::sort: args = const_cast<void**>(m_sort); break;
      case ArgList::stage1: args = const_cast<void**>(m_stage1); break;
      case ArgList::stage2: args = const_cast<void**>(m_stage2); break;
      case ArgList::reduce: args = const_cast<void**>(m_reduce); break;
    }
    // early_start: every MoE kernel waits on the device for the one before it
    // (kernels/moetune_portability.h), so the four launches overlap each other's tails.
    l.kernel.launch(l.grid, l.block, l.dynamic_shared_bytes, m_stream, args, order);
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
  // The per-call path: a range check and an index (bucket), the pointer and workspace checks
  // (one branch each when they pass; messages are formatted only on failure), the argument
  // template copied and patched on the stack (ForwardLaunches), then one cuLaunchKernel per
  // kernel. No heap allocation, lock, map lookup, context or stream query, or logging.
  bool const a8w4 = m_a8w4;
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
  ForwardLaunches const launches(b, a, a8w4);
  launches.enqueue();
}

}  // namespace moetune::runtime
