// probe_gpu() for the CUDA backend: the driver library is opened at run time, so a machine
// without an NVIDIA driver gets a sentence, not a loader error.
#include <dlfcn.h>

#include <string>

#include "autotune/gpu/availability.hpp"

namespace moetune::gpu {

GpuAvailability probe_gpu() {
  GpuAvailability result;
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    result.reason = "the NVIDIA driver library libcuda.so.1 is not installed on this machine";
    return result;
  }
  using init_fn = int (*)(unsigned);
  using count_fn = int (*)(int*);
  auto const cu_init = reinterpret_cast<init_fn>(::dlsym(driver, "cuInit"));
  auto const cu_count = reinterpret_cast<count_fn>(::dlsym(driver, "cuDeviceGetCount"));
  if (cu_init == nullptr || cu_count == nullptr) {
    result.reason = "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
    return result;
  }
  if (int const rc = cu_init(0); rc != 0) {
    result.reason = "cuInit failed with CUresult " + std::to_string(rc) +
                    " (no usable NVIDIA GPU, or the driver is not loaded)";
    return result;
  }
  int count = 0;
  if (int const rc = cu_count(&count); rc != 0 || count == 0) {
    result.reason = "the NVIDIA driver reports no GPU";
    return result;
  }
  result.available = true;
  result.device_count = count;
  return result;
}

}  // namespace moetune::gpu
