#include <utility>

#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {
namespace {

vendor::event_t native(const Event& event) {
  return static_cast<vendor::event_t>(event.native_handle());
}

}  // namespace

Event::Event(const Device& device) : m_device(&device) {
  vendor::event_t event{};
  MOETUNE_GPU_CALL(m_device, event_create, &event);
  m_handle = event;
}

Event::~Event() {
  if (m_handle != nullptr) (void)vendor::event_destroy(native(*this));
}

Event::Event(Event&& other) noexcept
    : m_device(other.m_device), m_handle(std::exchange(other.m_handle, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (m_handle != nullptr) (void)vendor::event_destroy(native(*this));
    m_device = other.m_device;
    m_handle = std::exchange(other.m_handle, nullptr);
  }
  return *this;
}

void Event::record(const Stream& stream) {
  MOETUNE_GPU_CALL(m_device, event_record, native(*this),
                   static_cast<vendor::stream_t>(stream.native_handle()));
}

void Event::synchronize() const { MOETUNE_GPU_CALL(m_device, event_synchronize, native(*this)); }

bool Event::query() const {
  vendor::status_t const status = vendor::event_query(native(*this));
  if (status == vendor::not_ready) return false;
  detail::check(status, vendor::event_query_name, "event", m_device);
  return true;
}

float elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0.0F;
  MOETUNE_GPU_CALL(&start.device(), event_elapsed_time, &ms, native(start), native(stop));
  return ms;
}

}  // namespace moetune::gpu
