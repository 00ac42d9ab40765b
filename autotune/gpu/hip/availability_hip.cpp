// probe_gpu() for the HIP backend.
#include <hip/hip_runtime_api.h>

#include <string>

#include "autotune/gpu/availability.hpp"

namespace moetune::gpu {

GpuAvailability probe_gpu() {
  GpuAvailability result;
  int count = 0;
  hipError_t const rc = hipGetDeviceCount(&count);
  if (rc != hipSuccess) {
    result.reason = std::string("hipGetDeviceCount failed: ") + hipGetErrorName(rc) + " (" +
                    hipGetErrorString(rc) + "); no usable AMD GPU";
    return result;
  }
  if (count == 0) {
    result.reason = "the HIP runtime reports no GPU";
    return result;
  }
  result.available = true;
  result.device_count = count;
  return result;
}

}  // namespace moetune::gpu
