#pragma once
// Turns a failed vendor call into a GpuError (private to autotune/gpu). Formatting happens only
// on failure, so checking costs a comparison on the timing path.
#include <source_location>
#include <string>

#include "autotune/gpu/vendor.hpp"

namespace moetune::gpu {
class Device;
}

namespace moetune::gpu::detail {

[[noreturn]] void throw_gpu_error(vendor::status_t status, const char* function,
                                  const char* arguments, const Device* device,
                                  std::source_location where);

inline void check(vendor::status_t status, const char* function, const char* arguments,
                  const Device* device,
                  std::source_location where = std::source_location::current()) {
  if (status != vendor::success) throw_gpu_error(status, function, arguments, device, where);
}

}  // namespace moetune::gpu::detail

// MOETUNE_GPU_CALL(device_ptr, mem_alloc, &ptr, bytes): calls vendor::mem_alloc(&ptr, bytes)
// and on failure throws GpuError("cuMemAlloc(&ptr, bytes)", ...) located at the call site.
#define MOETUNE_GPU_CALL(device, op, ...)                                                  \
  ::moetune::gpu::detail::check(::moetune::gpu::vendor::op(__VA_ARGS__),                   \
                                ::moetune::gpu::vendor::op##_name, #__VA_ARGS__, (device))
