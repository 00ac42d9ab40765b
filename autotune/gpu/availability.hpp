#pragma once
// Whether this process can use a GPU, and if not, why — asked before anything that needs one,
// so that a machine without a GPU gets a clear sentence instead of a driver error.
#include <string>

namespace moetune::gpu {

struct GpuAvailability {
  bool available = false;
  std::string reason;  // why not (driver library missing, no device, driver too old, ...)
  int device_count = 0;
};

// Cheap and side-effect free apart from initialising the driver; never throws.
[[nodiscard]] GpuAvailability probe_gpu();

}  // namespace moetune::gpu
