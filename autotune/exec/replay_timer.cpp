#include "autotune/exec/replay_timer.hpp"

namespace moetune::exec {

gpu::GraphExec capture_repeats(const MoePipeline& pipeline, const DeviceInputs& inputs,
                               const DeviceWeights& weights, gpu::Stream& stream,
                               PipelinePart part, int repeats, int first_copy) {
  gpu::GraphCapture capture(stream);
  for (int i = 0; i < repeats; ++i) {
    pipeline.enqueue(inputs, weights, stream, part, first_copy + i);
  }
  return capture.finish();
}

double ReplayTimer::time_us(const gpu::GraphExec& graph, const gpu::Stream& stream, int repeats) {
  m_start.record(stream);
  graph.launch(stream);
  m_stop.record(stream);
  m_stop.synchronize();
  return 1000.0 * static_cast<double>(gpu::elapsed_ms(m_start, m_stop)) / repeats;
}

}  // namespace moetune::exec
