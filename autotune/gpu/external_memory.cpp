// Copies to and from device memory the GPU layer did not allocate (gpu.hpp): the runtime
// reads an engine's weight tensors once, at load time, to prepare the repacked layout.
#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {

void copy_device_to_host(const Device& device, const void* device_address, std::span<std::byte> host) {
  if (host.empty()) return;
  MOETUNE_GPU_CALL(&device, memcpy_dtoh, host.data(), vendor::to_deviceptr(device_address),
                   host.size());
}

void copy_host_to_device(const Device& device, void* device_address, std::span<const std::byte> host) {
  if (host.empty()) return;
  // HIP declares the source non-const; it is only read.
  MOETUNE_GPU_CALL(&device, memcpy_htod, vendor::to_deviceptr(device_address),
                   const_cast<std::byte*>(host.data()),
                   host.size());
}

}  // namespace moetune::gpu
