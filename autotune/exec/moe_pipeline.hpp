#pragma once
// One (stage one, stage two) configuration pair ready to run on the GPU for M tokens of a
// shape: both code objects loaded, the launch plans computed, and the scratch buffers the
// pipeline owns (sorted slots, h, the fp32 partials of reduce variants, y) allocated.
// enqueue() queues sort + stage one (which clears an atomic stage two's accumulator) + stage
// two + reduce in order on a stream, which is also what a graph captures.
#include <cstdint>
#include <optional>
#include <vector>

#include "autotune/exec/device_buffers.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/jit/compile_result.hpp"
#include "autotune/search/kernel_config.hpp"
#include "autotune/search/render.hpp"

namespace moetune::exec {

// Which kernels enqueue() queues: sort alone, sort + stage one, stage two (with its reduce
// companion) alone, or the whole MoE. Stage two alone reads the slots and h left by an
// earlier full run (and, atomic, adds onto its accumulator uncleared: a timing, not a result).
enum class PipelinePart { sort, stage1, stage2, all };

class MoePipeline {
 public:
  // `stage1` / `stage2` are the compiled units of the configurations (search::render order of
  // kernel names). Throws moetune::Error if a unit did not compile or the configs disagree on
  // block_m (the sort granularity both stages read).
  MoePipeline(const gpu::Device& device, search::Arch arch, const moe::MoeShape& shape,
              std::int64_t M, const search::KernelConfig& stage1_config,
              const jit::CompileResult& stage1, const search::KernelConfig& stage2_config,
              const jit::CompileResult& stage2);

  // Queues the part on `stream`, reading weight copy `weight_copy` (modulo the copies held).
  void enqueue(const DeviceInputs& inputs, const DeviceWeights& weights, const gpu::Stream& stream,
               PipelinePart part = PipelinePart::all, int weight_copy = 0) const;

  // calibrate's known slowdown: from now on, every stage-two or full enqueue ends with the
  // delay kernel of `delay_unit` (exec/delay_unit.hpp) spinning `ns` nanoseconds. Throws
  // moetune::Error if the unit did not compile or lacks the kernel.
  void set_delay(const jit::CompileResult& delay_unit, std::uint64_t ns);

  // How the MoE's kernels are launched after one another: LaunchOrder::early_start (each
  // kernel's CTAs wait on the device for the previous kernel, so launches and start-up overlap
  // the previous kernel's tail) unless set to serial (`bench --no-launch-overlap`, to measure
  // what the overlap buys). The GPU layer falls back to serial where the device lacks it.
  void set_launch_order(gpu::LaunchOrder order) { m_order = order; }
  [[nodiscard]] gpu::LaunchOrder launch_order() const { return m_order; }

  // Fill every buffer the pipeline writes with `byte` (0xFF: a bf16/fp32 NaN pattern), so
  // that any element a kernel fails to write shows up as NaN.
  void fill_outputs(std::uint8_t byte);

  [[nodiscard]] std::vector<std::uint16_t> download_y() const;
  // Stage one's output: bf16 [M*topk][I] (A16W4, bf16) or e4m3 codes (A8W4) as raw bytes.
  [[nodiscard]] std::vector<std::uint8_t> download_h() const;
  [[nodiscard]] std::vector<std::uint8_t> download_h_scales() const;
  [[nodiscard]] std::vector<std::int32_t> download_sorted_slots() const;
  [[nodiscard]] std::vector<std::int32_t> download_block_expert() const;
  [[nodiscard]] std::int32_t download_num_blocks() const;

  [[nodiscard]] std::int64_t tokens() const { return m_M; }
  [[nodiscard]] const search::LaunchPlan& stage1_plan() const { return m_plan1; }
  [[nodiscard]] const search::LaunchPlan& stage2_plan() const { return m_plan2; }
  [[nodiscard]] const search::KernelConfig& stage1_config() const { return m_cfg1; }
  [[nodiscard]] const search::KernelConfig& stage2_config() const { return m_cfg2; }

 private:
  struct LoadedUnit {
    gpu::Module module;
    std::vector<gpu::Kernel> kernels;  // in LaunchPlan order
  };
  static LoadedUnit load(const gpu::Device& device, const jit::CompileResult& unit,
                         const search::LaunchPlan& plan, const char* which);
  void launch_sort(const DeviceInputs& in, const gpu::Stream& s) const;
  void launch_stage1(const DeviceInputs& in, const WeightCopy& w, const gpu::Stream& s) const;
  void launch_stage2(const DeviceInputs& in, const WeightCopy& w, const gpu::Stream& s) const;
  void launch_delay(const gpu::Stream& s) const;

  const gpu::Device* m_device;
  moe::MoeShape m_shape;
  std::int64_t m_M;
  search::KernelConfig m_cfg1, m_cfg2;
  search::LaunchPlan m_plan1, m_plan2;
  LoadedUnit m_unit1, m_unit2;
  gpu::DeviceBuffer m_sorted_slots, m_block_expert, m_num_blocks;
  gpu::DeviceBuffer m_h, m_h_scales, m_partial, m_y;
  gpu::DeviceBuffer m_x_bf16;  // x upcast by stage one's first launch (x_bf16; empty otherwise)
  std::optional<LoadedUnit> m_delay;  // set_delay: the delay kernel, launched after stage two
  std::uint64_t m_delay_ns = 0;
  gpu::LaunchOrder m_order = gpu::LaunchOrder::early_start;
};

}  // namespace moetune::exec
