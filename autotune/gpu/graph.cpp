#include <utility>

#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {
namespace {

vendor::stream_t native(const Stream& stream) {
  return static_cast<vendor::stream_t>(stream.native_handle());
}

}  // namespace

GraphExec::~GraphExec() { release(); }

GraphExec::GraphExec(GraphExec&& other) noexcept
    : m_device(other.m_device),
      m_graph(std::exchange(other.m_graph, nullptr)),
      m_exec(std::exchange(other.m_exec, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    release();
    m_device = other.m_device;
    m_graph = std::exchange(other.m_graph, nullptr);
    m_exec = std::exchange(other.m_exec, nullptr);
  }
  return *this;
}

void GraphExec::release() noexcept {
  if (m_exec != nullptr) (void)vendor::graph_exec_destroy(static_cast<vendor::graph_exec_t>(m_exec));
  if (m_graph != nullptr) (void)vendor::graph_destroy(static_cast<vendor::graph_t>(m_graph));
  m_exec = nullptr;
  m_graph = nullptr;
}

void GraphExec::launch(const Stream& stream) const {
  launch(ExternalStream{stream.native_handle()});
}

void GraphExec::launch(ExternalStream stream) const {
  MOETUNE_GPU_CALL(m_device, graph_launch, static_cast<vendor::graph_exec_t>(m_exec),
                   static_cast<vendor::stream_t>(stream.native_handle));
}

GraphCapture::GraphCapture(Stream& stream) : m_stream(&stream) {
  MOETUNE_GPU_CALL(&stream.device(), stream_begin_capture, native(stream),
                   vendor::capture_mode_thread_local);
  m_active = true;
}

GraphCapture::~GraphCapture() {
  if (!m_active) return;
  // Abandoned capture (an exception between begin and finish): end it so the stream works
  // again, and drop whatever was captured.
  vendor::graph_t graph{};
  if (vendor::stream_end_capture(native(*m_stream), &graph) == vendor::success &&
      graph != nullptr) {
    (void)vendor::graph_destroy(graph);
  }
}

GraphExec GraphCapture::finish() {
  Device const& device = m_stream->device();
  vendor::graph_t graph{};
  m_active = false;
  MOETUNE_GPU_CALL(&device, stream_end_capture, native(*m_stream), &graph);
  vendor::graph_exec_t exec{};
  vendor::status_t const status = vendor::graph_instantiate(&exec, graph);
  if (status != vendor::success) {
    (void)vendor::graph_destroy(graph);
    detail::check(status, vendor::graph_instantiate_name, "&exec, graph, 0", &device);
  }
  return GraphExec(device, graph, exec);
}

}  // namespace moetune::gpu
