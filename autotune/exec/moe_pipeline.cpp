#include "autotune/exec/moe_pipeline.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/exec/delay_unit.hpp"
#include "autotune/search/validity.hpp"

namespace moetune::exec {
namespace {

gpu::Dim3 to_gpu(search::Dim3 d) { return gpu::Dim3{d.x, d.y, d.z}; }

gpu::DeviceBuffer allocate(const gpu::Device& device, std::int64_t bytes) {
  if (bytes <= 0) return {};
  return gpu::DeviceBuffer(device, static_cast<std::size_t>(bytes));
}

void* address(const gpu::DeviceBuffer& b) { return b.empty() ? nullptr : b.data(); }

}  // namespace

MoePipeline::LoadedUnit MoePipeline::load(const gpu::Device& device, const jit::CompileResult& unit,
                                          const search::LaunchPlan& plan, const char* which) {
  if (!unit.ok) throw Error(fmt::format("{} did not compile:\n{}", which, unit.log));
  LoadedUnit loaded{gpu::Module(device, unit.image), {}};
  for (auto const& launch : plan.launches) {
    const jit::CompiledKernel* found = nullptr;
    for (auto const& k : unit.kernels) {
      if (k.name_expression == launch.kernel_name) found = &k;
    }
    if (found == nullptr) {
      throw Error(fmt::format("{}: the launch plan names {}, which the unit does not contain",
                              which, launch.kernel_name));
    }
    auto kernel = loaded.module.function(found->lowered_name);
    if (launch.dynamic_shared_bytes > 48 * 1024) {
      kernel.set_max_dynamic_shared_bytes(launch.dynamic_shared_bytes);
    }
    loaded.kernels.push_back(kernel);
  }
  return loaded;
}

MoePipeline::MoePipeline(const gpu::Device& device, search::Arch arch, const moe::MoeShape& shape,
                         std::int64_t M, const search::KernelConfig& stage1_config,
                         const jit::CompileResult& stage1,
                         const search::KernelConfig& stage2_config,
                         const jit::CompileResult& stage2)
    : m_device(&device),
      m_shape(shape),
      m_M(M),
      m_cfg1(stage1_config),
      m_cfg2(stage2_config),
      m_plan1(search::plan_launch(stage1_config, arch, shape, M)),
      m_plan2(search::plan_launch(stage2_config, arch, shape, M)),
      m_unit1(load(device, stage1, m_plan1, "stage one")),
      m_unit2(load(device, stage2, m_plan2, "stage two")) {
  if (auto const why = search::pair_violation(stage1_config, stage2_config)) {
    throw Error(fmt::format("stage one ({}) and stage two ({}) cannot run as one pipeline: {}", stage1_config.name(),
                            stage2_config.name(), *why));
  }
  auto const slots = M * shape.topk;
  auto const capacity = m_plan1.sort_capacity;
  m_sorted_slots = allocate(device, capacity * 4);
  m_block_expert = allocate(device, capacity / stage1_config.block_m * 4);
  m_num_blocks = allocate(device, 4);
  bool const fp8_h = search::h_is_fp8(stage1_config);
  m_h = allocate(device, slots * shape.inter * (fp8_h ? 1 : 2));
  if (fp8_h) m_h_scales = allocate(device, slots * shape.inter / 32);
  m_partial = allocate(device, m_plan2.partial_bytes);
  m_y = allocate(device, M * shape.hidden * 2);
  m_x_bf16 = allocate(device, m_plan1.x_bf16_bytes);
}

void MoePipeline::launch_sort(const DeviceInputs& in, const gpu::Stream& s) const {
  auto const& launch = m_plan1.launches.at(0);
  void* ids = address(in.topk_ids());
  auto M = static_cast<std::int32_t>(m_M);
  auto topk = static_cast<std::int32_t>(m_shape.topk);
  auto experts = static_cast<std::int32_t>(m_shape.experts);
  auto block_m = static_cast<std::int32_t>(m_cfg1.block_m);
  auto capacity = static_cast<std::int32_t>(m_plan1.sort_capacity);
  void* slots = address(m_sorted_slots);
  void* block_expert = address(m_block_expert);
  void* num_blocks = address(m_num_blocks);
  // With x_bf16 the sort's launch also upcasts x into m_x_bf16 (kernels/moe_upcast_x.cuh).
  void* x = address(in.x());
  void* x_scales = address(in.x_scales());
  void* xb = address(m_x_bf16);
  auto H = static_cast<std::int32_t>(m_shape.hidden);
  auto upcast_ctas = static_cast<std::int32_t>(m_plan1.upcast_ctas);
  void* args[] = {&ids,        &M,           &topk, &experts, &block_m, &capacity, &slots, &block_expert,
                  &num_blocks, &x,           &x_scales, &xb,  &H,       &upcast_ctas};
  m_unit1.kernels.at(0).launch(to_gpu(launch.grid), to_gpu(launch.block),
                               launch.dynamic_shared_bytes, s, args, m_order);
}

void MoePipeline::launch_stage1(const DeviceInputs& in, const WeightCopy& w,
                                const gpu::Stream& s) const {
  auto const& launch = m_plan1.launches.at(1);
  // Stage one reading x in bf16 reads the sort launch's upcast (and no scales).
  void* x = m_x_bf16.empty() ? address(in.x()) : address(m_x_bf16);
  void* x_scales = m_x_bf16.empty() ? address(in.x_scales()) : nullptr;
  // Repacked and wgmma-tiled kernels read the same weights in a layout prepared at load time.
  auto const w1_view = weight_view(w, 1, search::weight_layout(m_cfg1));
  void* w1 = address(w1_view.codes);
  void* w1_scales = address(w1_view.scales);
  void* slots = address(m_sorted_slots);
  void* block_expert = address(m_block_expert);
  void* num_blocks = address(m_num_blocks);
  void* weights = address(in.topk_weights());
  void* h = address(m_h);
  void* h_scales = address(m_h_scales);
  auto M = static_cast<std::int32_t>(m_M);
  auto topk = static_cast<std::int32_t>(m_shape.topk);
  auto H = static_cast<std::int32_t>(m_shape.hidden);
  auto I = static_cast<std::int32_t>(m_shape.inter);
  // An atomic stage two's accumulator, cleared by stage one over its whole grid.
  void* acc = address(m_partial);
  auto acc_n16 = static_cast<std::int64_t>(m_plan2.accumulator_words);
  auto grid_x = static_cast<std::int32_t>(launch.grid.x);
  auto ctas = static_cast<std::int32_t>(launch.grid.x * launch.grid.y * launch.grid.z);
  void* args[] = {&x, &x_scales, &w1, &w1_scales, &slots, &block_expert, &num_blocks,
                  &weights, &h, &h_scales, &M, &topk, &H, &I, &acc, &acc_n16, &grid_x, &ctas};
  m_unit1.kernels.at(1).launch(to_gpu(launch.grid), to_gpu(launch.block),
                               launch.dynamic_shared_bytes, s, args, m_order);
}

void MoePipeline::launch_stage2(const DeviceInputs& in, const WeightCopy& w,
                                const gpu::Stream& s) const {
  void* h = address(m_h);
  void* h_scales = address(m_h_scales);
  auto const w2_view = weight_view(w, 2, search::weight_layout(m_cfg2));
  void* w2 = address(w2_view.codes);
  void* w2_scales = address(w2_view.scales);
  void* slots = address(m_sorted_slots);
  void* block_expert = address(m_block_expert);
  void* num_blocks = address(m_num_blocks);
  void* weights = address(in.topk_weights());
  void* y = address(m_y);
  void* partial = address(m_partial);
  auto M = static_cast<std::int32_t>(m_M);
  auto topk = static_cast<std::int32_t>(m_shape.topk);
  auto H = static_cast<std::int32_t>(m_shape.hidden);
  auto I = static_cast<std::int32_t>(m_shape.inter);
  for (std::size_t i = 0; i < m_plan2.launches.size(); ++i) {
    auto const& launch = m_plan2.launches[i];
    auto const& kernel = m_unit2.kernels[i];
    if (launch.kernel_name == "moetune::moe_reduce_y") {
      // reduce: sums each token's topk partial rows; atomic: rounds acc[M][H] (one row each).
      std::int32_t rows = m_cfg2.stage2_mode == search::Stage2Mode::atomic ? 1 : topk;
      void* args[] = {&partial, &y, &M, &rows, &H};
      kernel.launch(to_gpu(launch.grid), to_gpu(launch.block), launch.dynamic_shared_bytes, s, args,
                    m_order);
    } else {
      void* args[] = {&h, &h_scales, &w2, &w2_scales, &slots, &block_expert, &num_blocks,
                      &weights, &y, &partial, &M, &topk, &H, &I};
      kernel.launch(to_gpu(launch.grid), to_gpu(launch.block), launch.dynamic_shared_bytes, s, args,
                    m_order);
    }
  }
}

void MoePipeline::set_delay(const jit::CompileResult& delay_unit, std::uint64_t ns) {
  m_delay = load(*m_device, delay_unit, delay_launch_plan(), "delay");
  m_delay_ns = ns;
}

void MoePipeline::launch_delay(const gpu::Stream& s) const {
  if (!m_delay) return;
  auto const plan = delay_launch_plan();
  auto const& launch = plan.launches.at(0);
  auto ns = static_cast<unsigned long long>(m_delay_ns);
  void* args[] = {&ns};
  m_delay->kernels.at(0).launch(to_gpu(launch.grid), to_gpu(launch.block),
                                launch.dynamic_shared_bytes, s, args);
}

void MoePipeline::enqueue(const DeviceInputs& inputs, const DeviceWeights& weights,
                          const gpu::Stream& stream, PipelinePart part, int weight_copy) const {
  if (inputs.tokens() != m_M) {
    throw Error(fmt::format("pipeline built for M={} given a workload of M={}", m_M, inputs.tokens()));
  }
  auto const& w = weights.copy(weight_copy);
  switch (part) {
    case PipelinePart::sort:
      launch_sort(inputs, stream);
      break;
    case PipelinePart::stage1:
      launch_sort(inputs, stream);
      launch_stage1(inputs, w, stream);
      break;
    case PipelinePart::stage2:
      launch_stage2(inputs, w, stream);
      launch_delay(stream);
      break;
    case PipelinePart::all:
      launch_sort(inputs, stream);
      launch_stage1(inputs, w, stream);
      launch_stage2(inputs, w, stream);
      launch_delay(stream);
      break;
  }
}

void MoePipeline::fill_outputs(std::uint8_t byte) {
  for (auto* b : {&m_sorted_slots, &m_block_expert, &m_num_blocks, &m_h, &m_h_scales, &m_partial,
                  &m_y, &m_x_bf16}) {
    if (!b->empty()) b->memset(byte);
  }
}

std::vector<std::uint16_t> MoePipeline::download_y() const { return m_y.download_as<std::uint16_t>(); }
std::vector<std::uint8_t> MoePipeline::download_h() const { return m_h.download_as<std::uint8_t>(); }
std::vector<std::uint8_t> MoePipeline::download_h_scales() const {
  return m_h_scales.empty() ? std::vector<std::uint8_t>{} : m_h_scales.download_as<std::uint8_t>();
}
std::vector<std::int32_t> MoePipeline::download_sorted_slots() const {
  return m_sorted_slots.download_as<std::int32_t>();
}
std::vector<std::int32_t> MoePipeline::download_block_expert() const {
  return m_block_expert.download_as<std::int32_t>();
}
std::int32_t MoePipeline::download_num_blocks() const {
  return m_num_blocks.download_as<std::int32_t>().at(0);
}

}  // namespace moetune::exec
