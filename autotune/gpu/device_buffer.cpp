#include <fmt/format.h>

#include <utility>

#include "autotune/core/error.hpp"
#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {
namespace {

vendor::stream_t native(const Stream& stream) {
  return static_cast<vendor::stream_t>(stream.native_handle());
}

// The synchronous copies and memsets below run on the legacy default stream, and the driver
// may return before they finish (a memset or a device-to-device copy always may; a copy from
// pageable host memory may before its DMA is done). Our streams are non-blocking, so nothing
// orders that work before the kernels launched next: the verifier's 42 MB NaN fill of stage
// one's bf16 x (M = 4096) was still running when the sort's launch wrote x, and overwrote
// four fifths of it (session 22). So each of them waits for the legacy stream before it
// returns, as the header promises.
void finish(const Device* device) { MOETUNE_GPU_CALL(device, stream_synchronize, vendor::stream_t{}); }

}  // namespace

DeviceBuffer::DeviceBuffer(const Device& device, std::size_t bytes)
    : m_device(&device), m_bytes(bytes) {
  if (bytes == 0) return;  // an empty buffer owns nothing; drivers reject 0-byte allocations
  vendor::deviceptr_t ptr{};
  MOETUNE_GPU_CALL(m_device, mem_alloc, &ptr, bytes);
  m_ptr = vendor::from_deviceptr(ptr);
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_device(other.m_device),
      m_ptr(std::exchange(other.m_ptr, nullptr)),
      m_bytes(std::exchange(other.m_bytes, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    m_device = other.m_device;
    m_ptr = std::exchange(other.m_ptr, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (m_ptr != nullptr) (void)vendor::mem_free(vendor::to_deviceptr(m_ptr));
  m_ptr = nullptr;
  m_bytes = 0;
}

void DeviceBuffer::check_range(std::size_t offset, std::size_t bytes, const char* what) const {
  if (offset > m_bytes || bytes > m_bytes - offset) {
    throw Error(fmt::format("DeviceBuffer::{}: range [{}, {}) exceeds the buffer's {} bytes", what,
                            offset, offset + bytes, m_bytes));
  }
}

void DeviceBuffer::upload(std::span<const std::byte> host, std::size_t offset) {
  check_range(offset, host.size(), "upload");
  if (host.empty()) return;
  auto const dst = vendor::to_deviceptr(static_cast<std::byte*>(m_ptr) + offset);
  MOETUNE_GPU_CALL(m_device, memcpy_htod, dst, const_cast<std::byte*>(host.data()), host.size());
  finish(m_device);
}

void DeviceBuffer::download(std::span<std::byte> host, std::size_t offset) const {
  check_range(offset, host.size(), "download");
  if (host.empty()) return;
  auto const src = vendor::to_deviceptr(static_cast<std::byte*>(m_ptr) + offset);
  MOETUNE_GPU_CALL(m_device, memcpy_dtoh, host.data(), src, host.size());
}

void DeviceBuffer::memset(std::uint8_t value) { memset(value, 0, m_bytes); }

void DeviceBuffer::memset(std::uint8_t value, std::size_t offset, std::size_t bytes) {
  check_range(offset, bytes, "memset");
  if (bytes == 0) return;
  auto const dst = vendor::to_deviceptr(static_cast<std::byte*>(m_ptr) + offset);
  MOETUNE_GPU_CALL(m_device, memset_d8, dst, static_cast<unsigned char>(value), bytes);
  finish(m_device);
}

void DeviceBuffer::copy_from(const DeviceBuffer& source) {
  check_range(0, source.size(), "copy_from");
  if (source.empty()) return;
  MOETUNE_GPU_CALL(m_device, memcpy_dtod, vendor::to_deviceptr(m_ptr),
                   vendor::to_deviceptr(source.data()), source.size());
  finish(m_device);
}

void DeviceBuffer::upload_async(std::span<const std::byte> host, const Stream& stream,
                                std::size_t offset) {
  check_range(offset, host.size(), "upload_async");
  if (host.empty()) return;
  auto const dst = vendor::to_deviceptr(static_cast<std::byte*>(m_ptr) + offset);
  MOETUNE_GPU_CALL(m_device, memcpy_htod_async, dst, const_cast<std::byte*>(host.data()),
                   host.size(), native(stream));
}

void DeviceBuffer::download_async(std::span<std::byte> host, const Stream& stream,
                                  std::size_t offset) const {
  check_range(offset, host.size(), "download_async");
  if (host.empty()) return;
  auto const src = vendor::to_deviceptr(static_cast<std::byte*>(m_ptr) + offset);
  MOETUNE_GPU_CALL(m_device, memcpy_dtoh_async, host.data(), src, host.size(), native(stream));
}

void DeviceBuffer::memset_async(std::uint8_t value, const Stream& stream) {
  if (m_bytes == 0) return;
  MOETUNE_GPU_CALL(m_device, memset_d8_async, vendor::to_deviceptr(m_ptr),
                   static_cast<unsigned char>(value), m_bytes, native(stream));
}

void DeviceBuffer::copy_from_async(const DeviceBuffer& source, const Stream& stream) {
  check_range(0, source.size(), "copy_from_async");
  if (source.empty()) return;
  MOETUNE_GPU_CALL(m_device, memcpy_dtod_async, vendor::to_deviceptr(m_ptr),
                   vendor::to_deviceptr(source.data()), source.size(), native(stream));
}

}  // namespace moetune::gpu
