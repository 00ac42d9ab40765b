#pragma once
// The vendor-mapping layer (private to autotune/gpu): the few dozen runtime operations the GPU
// layer uses, under one set of names, mapped onto the CUDA driver API or the HIP runtime.
// The CUDA driver API and HIP's module API have the same shape (hipModuleLaunchKernel mirrors
// cuLaunchKernel, hipMemcpyHtoD mirrors cuMemcpyHtoD, ...), so most operations are a one-line
// mapping; the few that differ are written out by hand below. The code in autotune/gpu/*.cpp
// is written once against these names.
//
// Each operation `op` comes with `op_name`, the vendor's own function name, so that an error
// names the call the user would look up in the vendor's documentation.
#include <cstddef>

#if defined(MOETUNE_BACKEND_CUDA)
#include <cuda.h>

#include "autotune/gpu/cuda/driver_api.hpp"
#elif defined(MOETUNE_BACKEND_HIP)
#include <hip/hip_runtime_api.h>
#else
#error "vendor.hpp needs MOETUNE_BACKEND_CUDA or MOETUNE_BACKEND_HIP"
#endif

namespace moetune::gpu::vendor {

#if defined(MOETUNE_BACKEND_CUDA)

using status_t = CUresult;
using deviceptr_t = CUdeviceptr;
using stream_t = CUstream;
using event_t = CUevent;
using graph_t = CUgraph;
using graph_exec_t = CUgraphExec;
using module_t = CUmodule;
using function_t = CUfunction;
inline constexpr status_t success = CUDA_SUCCESS;
inline constexpr status_t not_ready = CUDA_ERROR_NOT_READY;

// op(args...) -> driver().cuXxx(args...), with op_name = "cuXxx".
#define MOETUNE_VENDOR_OP(op, cuda_fn, hip_fn)              \
  inline constexpr char op##_name[] = #cuda_fn;             \
  template <class... Args>                                   \
  status_t op(Args&&... args) {                              \
    return ::moetune::gpu::cuda::driver().cuda_fn(args...);  \
  }

#else

using status_t = hipError_t;
using deviceptr_t = hipDeviceptr_t;
using stream_t = hipStream_t;
using event_t = hipEvent_t;
using graph_t = hipGraph_t;
using graph_exec_t = hipGraphExec_t;
using module_t = hipModule_t;
using function_t = hipFunction_t;
inline constexpr status_t success = hipSuccess;
inline constexpr status_t not_ready = hipErrorNotReady;

#define MOETUNE_VENDOR_OP(op, cuda_fn, hip_fn) \
  inline constexpr char op##_name[] = #hip_fn; \
  template <class... Args>                      \
  status_t op(Args&&... args) {                 \
    return ::hip_fn(args...);                   \
  }

#endif

// Operations with the same shape on both vendors.
MOETUNE_VENDOR_OP(mem_alloc, cuMemAlloc, hipMalloc)
MOETUNE_VENDOR_OP(mem_free, cuMemFree, hipFree)
MOETUNE_VENDOR_OP(mem_get_info, cuMemGetInfo, hipMemGetInfo)
MOETUNE_VENDOR_OP(memcpy_htod, cuMemcpyHtoD, hipMemcpyHtoD)
MOETUNE_VENDOR_OP(memcpy_dtoh, cuMemcpyDtoH, hipMemcpyDtoH)
MOETUNE_VENDOR_OP(memcpy_dtod, cuMemcpyDtoD, hipMemcpyDtoD)
MOETUNE_VENDOR_OP(memcpy_htod_async, cuMemcpyHtoDAsync, hipMemcpyHtoDAsync)
MOETUNE_VENDOR_OP(memcpy_dtoh_async, cuMemcpyDtoHAsync, hipMemcpyDtoHAsync)
MOETUNE_VENDOR_OP(memcpy_dtod_async, cuMemcpyDtoDAsync, hipMemcpyDtoDAsync)
MOETUNE_VENDOR_OP(memset_d8, cuMemsetD8, hipMemsetD8)
MOETUNE_VENDOR_OP(memset_d8_async, cuMemsetD8Async, hipMemsetD8Async)
MOETUNE_VENDOR_OP(stream_synchronize, cuStreamSynchronize, hipStreamSynchronize)
MOETUNE_VENDOR_OP(stream_destroy, cuStreamDestroy, hipStreamDestroy)
MOETUNE_VENDOR_OP(stream_begin_capture, cuStreamBeginCapture, hipStreamBeginCapture)
MOETUNE_VENDOR_OP(stream_end_capture, cuStreamEndCapture, hipStreamEndCapture)
MOETUNE_VENDOR_OP(event_record, cuEventRecord, hipEventRecord)
MOETUNE_VENDOR_OP(event_synchronize, cuEventSynchronize, hipEventSynchronize)
MOETUNE_VENDOR_OP(event_query, cuEventQuery, hipEventQuery)
MOETUNE_VENDOR_OP(event_elapsed_time, cuEventElapsedTime, hipEventElapsedTime)
MOETUNE_VENDOR_OP(event_destroy, cuEventDestroy, hipEventDestroy)
MOETUNE_VENDOR_OP(graph_launch, cuGraphLaunch, hipGraphLaunch)
MOETUNE_VENDOR_OP(graph_exec_destroy, cuGraphExecDestroy, hipGraphExecDestroy)
MOETUNE_VENDOR_OP(graph_destroy, cuGraphDestroy, hipGraphDestroy)
MOETUNE_VENDOR_OP(module_load_data, cuModuleLoadData, hipModuleLoadData)
MOETUNE_VENDOR_OP(module_unload, cuModuleUnload, hipModuleUnload)
MOETUNE_VENDOR_OP(module_get_function, cuModuleGetFunction, hipModuleGetFunction)
MOETUNE_VENDOR_OP(launch_kernel, cuLaunchKernel, hipModuleLaunchKernel)
MOETUNE_VENDOR_OP(func_get_attribute, cuFuncGetAttribute, hipFuncGetAttribute)

#undef MOETUNE_VENDOR_OP

// Operations whose shape or constants differ.
#if defined(MOETUNE_BACKEND_CUDA)

// Device set-up, used only by cuda/device_cuda.cpp.
#define MOETUNE_CUDA_OP(op, cuda_fn)                        \
  inline constexpr char op##_name[] = #cuda_fn;             \
  template <class... Args>                                   \
  status_t op(Args&&... args) {                              \
    return ::moetune::gpu::cuda::driver().cuda_fn(args...);  \
  }
MOETUNE_CUDA_OP(init_driver, cuInit)
MOETUNE_CUDA_OP(driver_get_version, cuDriverGetVersion)
MOETUNE_CUDA_OP(get_device, cuDeviceGet)
MOETUNE_CUDA_OP(device_get_name, cuDeviceGetName)
MOETUNE_CUDA_OP(device_get_attribute, cuDeviceGetAttribute)
MOETUNE_CUDA_OP(device_total_mem, cuDeviceTotalMem)
MOETUNE_CUDA_OP(device_get_pci_bus_id, cuDeviceGetPCIBusId)
MOETUNE_CUDA_OP(primary_ctx_retain, cuDevicePrimaryCtxRetain)
MOETUNE_CUDA_OP(ctx_set_current, cuCtxSetCurrent)
#undef MOETUNE_CUDA_OP

inline constexpr char stream_create_name[] = "cuStreamCreate";
inline status_t stream_create(stream_t* stream) {
  return cuda::driver().cuStreamCreate(stream, CU_STREAM_NON_BLOCKING);
}
inline constexpr char event_create_name[] = "cuEventCreate";
inline status_t event_create(event_t* event) {
  return cuda::driver().cuEventCreate(event, CU_EVENT_DEFAULT);
}
inline constexpr char graph_instantiate_name[] = "cuGraphInstantiate";
inline status_t graph_instantiate(graph_exec_t* exec, graph_t graph) {
  return cuda::driver().cuGraphInstantiate(exec, graph, 0);
}
inline constexpr auto capture_mode_thread_local = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
inline constexpr char stream_is_capturing_name[] = "cuStreamIsCapturing";
inline status_t stream_is_capturing(stream_t stream, bool* capturing) {
  CUstreamCaptureStatus status{};
  status_t const rc = cuda::driver().cuStreamIsCapturing(stream, &status);
  *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
  return rc;
}
inline constexpr char func_set_max_dynamic_shared_name[] = "cuFuncSetAttribute";
inline status_t func_set_max_dynamic_shared(function_t function, int bytes) {
  return cuda::driver().cuFuncSetAttribute(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}
inline constexpr auto attr_num_regs = CU_FUNC_ATTRIBUTE_NUM_REGS;
inline constexpr auto attr_shared_bytes = CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
inline constexpr auto attr_local_bytes = CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES;
inline constexpr auto attr_max_threads = CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
inline constexpr char device_synchronize_name[] = "cuCtxSynchronize";
inline status_t device_synchronize() { return cuda::driver().cuCtxSynchronize(); }
// cuLaunchKernel with the programmatic-stream-serialization attribute (gpu::LaunchOrder).
inline constexpr char launch_kernel_early_start_name[] = "cuLaunchKernelEx";
inline status_t launch_kernel_early_start(function_t f, unsigned gx, unsigned gy, unsigned gz,
                                          unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                          stream_t stream, void** args) {
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = gx, config.gridDimY = gy, config.gridDimZ = gz;
  config.blockDimX = bx, config.blockDimY = by, config.blockDimZ = bz;
  config.sharedMemBytes = shared;
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cuda::driver().cuLaunchKernelEx(&config, f, args, nullptr);
}

#else

inline constexpr char stream_create_name[] = "hipStreamCreateWithFlags";
inline status_t stream_create(stream_t* stream) {
  return hipStreamCreateWithFlags(stream, hipStreamNonBlocking);
}
inline constexpr char event_create_name[] = "hipEventCreateWithFlags";
inline status_t event_create(event_t* event) {
  return hipEventCreateWithFlags(event, hipEventDefault);
}
inline constexpr char graph_instantiate_name[] = "hipGraphInstantiate";
inline status_t graph_instantiate(graph_exec_t* exec, graph_t graph) {
  return hipGraphInstantiate(exec, graph, nullptr, nullptr, 0);
}
inline constexpr auto capture_mode_thread_local = hipStreamCaptureModeThreadLocal;
inline constexpr char stream_is_capturing_name[] = "hipStreamIsCapturing";
inline status_t stream_is_capturing(stream_t stream, bool* capturing) {
  hipStreamCaptureStatus status{};
  status_t const rc = hipStreamIsCapturing(stream, &status);
  *capturing = status != hipStreamCaptureStatusNone;
  return rc;
}
// HIP 5.2's hipFuncSetAttribute takes a host-side kernel stub, not a module function, and AMD
// GPUs give every kernel the full LDS without opting in: the GPU layer checks the request
// against the device limit instead (module.cpp).
inline constexpr auto attr_num_regs = HIP_FUNC_ATTRIBUTE_NUM_REGS;
inline constexpr auto attr_shared_bytes = HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
inline constexpr auto attr_local_bytes = HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES;
inline constexpr auto attr_max_threads = HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
inline constexpr char device_synchronize_name[] = "hipDeviceSynchronize";
inline status_t device_synchronize() { return hipDeviceSynchronize(); }
// HIP has no programmatic dependent launch: DeviceInfo::early_start_launches is false there
// and this is never called; it keeps module.cpp one piece of code.
inline constexpr char launch_kernel_early_start_name[] = "hipModuleLaunchKernel";
inline status_t launch_kernel_early_start(function_t f, unsigned gx, unsigned gy, unsigned gz,
                                          unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                          stream_t stream, void** args) {
  return hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, args, nullptr);
}

#endif

// The vendor's name and text for a status code.
[[nodiscard]] const char* error_name(status_t status);
[[nodiscard]] const char* error_text(status_t status);

// Pointer conversions between the public void* and the vendor's device-pointer type.
[[nodiscard]] inline deviceptr_t to_deviceptr(const void* ptr) {
#if defined(MOETUNE_BACKEND_CUDA)
  return reinterpret_cast<deviceptr_t>(ptr);
#else
  return const_cast<void*>(ptr);
#endif
}
[[nodiscard]] inline void* from_deviceptr(deviceptr_t ptr) {
#if defined(MOETUNE_BACKEND_CUDA)
  return reinterpret_cast<void*>(ptr);
#else
  return ptr;
#endif
}

}  // namespace moetune::gpu::vendor
