#pragma once
// The CUDA driver API, loaded at run time: libcuda.so.1 is opened with dlopen and every entry
// point is fetched with cuGetProcAddress at the ABI version of the cuda.h we compiled against,
// so the binary starts on a machine without an NVIDIA driver (and says so) and always calls
// the versioned (_v2, _v3...) entry points that match our headers — dlsym on the legacy
// unversioned names would silently bind the oldest ABI.
#include <cuda.h>

namespace moetune::gpu::cuda {

// X(name): a driver function fetched under its own base name. Each member's type is the
// prototype cuda.h declares for `name` (cuda.h maps e.g. cuMemAlloc to cuMemAlloc_v2, so the
// member is cuMemAlloc_v2 too and the call sites read naturally either way).
#define MOETUNE_CUDA_DRIVER_FUNCTIONS(X)                                                   \
  X(cuInit)                                                                                \
  X(cuDriverGetVersion)                                                                    \
  X(cuDeviceGet)                                                                           \
  X(cuDeviceGetCount)                                                                      \
  X(cuDeviceGetName)                                                                       \
  X(cuDeviceGetAttribute)                                                                  \
  X(cuDeviceTotalMem)                                                                      \
  X(cuDeviceGetPCIBusId)                                                                   \
  X(cuDevicePrimaryCtxRetain)                                                              \
  X(cuDevicePrimaryCtxRelease)                                                             \
  X(cuCtxSetCurrent)                                                                       \
  X(cuCtxSynchronize)                                                                      \
  X(cuGetErrorName)                                                                        \
  X(cuGetErrorString)                                                                      \
  X(cuMemAlloc)                                                                            \
  X(cuMemFree)                                                                             \
  X(cuMemGetInfo)                                                                          \
  X(cuMemcpyHtoD)                                                                          \
  X(cuMemcpyDtoH)                                                                          \
  X(cuMemcpyDtoD)                                                                          \
  X(cuMemcpyHtoDAsync)                                                                     \
  X(cuMemcpyDtoHAsync)                                                                     \
  X(cuMemcpyDtoDAsync)                                                                     \
  X(cuMemsetD8)                                                                            \
  X(cuMemsetD8Async)                                                                       \
  X(cuStreamCreate)                                                                        \
  X(cuStreamSynchronize)                                                                   \
  X(cuStreamDestroy)                                                                       \
  X(cuStreamBeginCapture)                                                                  \
  X(cuStreamEndCapture)                                                                    \
  X(cuStreamIsCapturing)                                                                   \
  X(cuEventCreate)                                                                         \
  X(cuEventRecord)                                                                         \
  X(cuEventSynchronize)                                                                    \
  X(cuEventQuery)                                                                          \
  X(cuEventElapsedTime)                                                                    \
  X(cuEventDestroy)                                                                        \
  X(cuGraphInstantiateWithFlags)                                                           \
  X(cuGraphLaunch)                                                                         \
  X(cuGraphExecDestroy)                                                                    \
  X(cuGraphDestroy)                                                                        \
  X(cuModuleLoadData)                                                                      \
  X(cuModuleUnload)                                                                        \
  X(cuModuleGetFunction)                                                                   \
  X(cuLaunchKernel)                                                                        \
  X(cuLaunchKernelEx)                                                                      \
  X(cuFuncGetAttribute)                                                                    \
  X(cuFuncSetAttribute)

// (cuda.h also maps cuGraphInstantiate onto cuGraphInstantiateWithFlags, so
// driver().cuGraphInstantiate(...) resolves to the member below.)
struct DriverApi {
#define MOETUNE_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  MOETUNE_CUDA_DRIVER_FUNCTIONS(MOETUNE_CUDA_MEMBER)
#undef MOETUNE_CUDA_MEMBER
};

// The loaded driver, opened on first use (thread-safe). Throws GpuError naming what is missing
// when there is no usable driver.
[[nodiscard]] const DriverApi& driver();

}  // namespace moetune::gpu::cuda
