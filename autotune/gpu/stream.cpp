#include <utility>

#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {

Stream::Stream(const Device& device) : m_device(&device) {
  vendor::stream_t stream{};
  MOETUNE_GPU_CALL(m_device, stream_create, &stream);
  m_handle = stream;
}

Stream::~Stream() {
  // Destruction never throws: a failure here means the context is already gone.
  if (m_handle != nullptr) (void)vendor::stream_destroy(static_cast<vendor::stream_t>(m_handle));
}

Stream::Stream(Stream&& other) noexcept
    : m_device(other.m_device), m_handle(std::exchange(other.m_handle, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (m_handle != nullptr) (void)vendor::stream_destroy(static_cast<vendor::stream_t>(m_handle));
    m_device = other.m_device;
    m_handle = std::exchange(other.m_handle, nullptr);
  }
  return *this;
}

void Stream::synchronize() const {
  MOETUNE_GPU_CALL(m_device, stream_synchronize, static_cast<vendor::stream_t>(m_handle));
}

bool is_capturing(const Device& device, ExternalStream stream) {
  bool capturing = false;
  MOETUNE_GPU_CALL(&device, stream_is_capturing,
                   static_cast<vendor::stream_t>(stream.native_handle), &capturing);
  return capturing;
}

std::string_view to_string(Vendor vendor) {
  return vendor == Vendor::nvidia ? "nvidia" : "amd";
}

void Device::synchronize() const { MOETUNE_GPU_CALL(this, device_synchronize); }

MemoryInfo Device::memory_info() const {
  MemoryInfo info;
  MOETUNE_GPU_CALL(this, mem_get_info, &info.free_bytes, &info.total_bytes);
  return info;
}

}  // namespace moetune::gpu
