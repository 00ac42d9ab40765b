#pragma once
// The timing unit of DESIGN.md §4: one graph replay of R launches of the unit under test,
// timed with events around the replay, divided by R. Capturing R launches into one graph takes
// the CPU's launch cost out of the figure; rotating weight copies inside the graph keeps the
// weights out of L2 unless the caller asks for hot weights (one copy).
#include "autotune/exec/moe_pipeline.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::exec {

// Captures `repeats` launches of `part`, launch i reading weight copy (first_copy + i).
[[nodiscard]] gpu::GraphExec capture_repeats(const MoePipeline& pipeline, const DeviceInputs& inputs,
                                             const DeviceWeights& weights, gpu::Stream& stream,
                                             PipelinePart part, int repeats, int first_copy = 0);

class ReplayTimer {
 public:
  explicit ReplayTimer(const gpu::Device& device) : m_start(device), m_stop(device) {}
  // Microseconds per launch of one replay of `graph` (which holds `repeats` launches).
  [[nodiscard]] double time_us(const gpu::GraphExec& graph, const gpu::Stream& stream, int repeats);

 private:
  gpu::Event m_start, m_stop;
};

}  // namespace moetune::exec
