#include "autotune/runtime/forward_plan.hpp"

namespace moetune::runtime {

ForwardPlan::ForwardPlan(const PreparedLayer& layer, const gpu::Device& device,
                         const moetune_forward_args& call)
    : m_layer(&layer), m_device(&device), m_call(call) {
  // forward() checks the call and enqueues its launches; on a stream of our own under capture
  // (thread-local mode: other threads' GPU work is not disturbed) they become the graph.
  gpu::Stream capture_stream(device);
  auto captured = call;
  captured.stream = capture_stream.native_handle();
  if (call.tokens == 0) {
    layer.forward(captured);  // only the checks: no launch at M = 0
    return;
  }
  gpu::GraphCapture capture(capture_stream);
  layer.forward(captured);
  m_graph = capture.finish();
}

void ForwardPlan::launch(void* stream) const {
  if (!m_graph.valid()) return;
  gpu::ExternalStream const s{stream};
  if (gpu::is_capturing(*m_device, s)) {
    auto call = m_call;
    call.stream = stream;
    m_layer->forward(call);
    return;
  }
  m_graph.launch(s);
}

}  // namespace moetune::runtime
