#include "autotune/gpu/cuda/driver_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <source_location>
#include <string>

#include "autotune/core/error.hpp"

namespace moetune::gpu::cuda {
namespace {

using get_proc_address_fn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                         CUdriverProcAddressQueryResult*);

[[noreturn]] void fail(std::string call, std::string reason,
                       std::source_location where = std::source_location::current()) {
  throw GpuError(std::move(call), -1, "driver unavailable", std::move(reason), "", where);
}

DriverApi load() {
  // RTLD_LOCAL: the driver's symbols must not satisfy anyone else's undefined references.
  void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    char const* why = ::dlerror();
    fail("dlopen(\"libcuda.so.1\")",
         fmt::format("the NVIDIA driver library is not installed or not loadable ({})",
                     why != nullptr ? why : "unknown reason"));
  }
  // The only symbol fetched with dlsym: the versioned resolver itself (CUDA 12+).
  auto const get_proc =
      reinterpret_cast<get_proc_address_fn>(::dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    fail("dlsym(\"cuGetProcAddress_v2\")",
         "the NVIDIA driver is older than CUDA 12; moe-tune needs a CUDA 12+ driver");
  }
  auto const resolve = [&](const char* name, void** slot) {
    CUdriverProcAddressQueryResult status{};
    CUresult const rc = get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (rc != CUDA_SUCCESS || *slot == nullptr || status != CU_GET_PROC_ADDRESS_SUCCESS) {
      fail(fmt::format("cuGetProcAddress(\"{}\")", name),
           status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
               ? fmt::format("the driver is older than the CUDA {}.{} this binary needs",
                             CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10)
               : "the driver does not provide this entry point");
    }
  };
  DriverApi api;
#define MOETUNE_CUDA_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&api.name));
  MOETUNE_CUDA_DRIVER_FUNCTIONS(MOETUNE_CUDA_RESOLVE)
#undef MOETUNE_CUDA_RESOLVE
  // Deliberately never dlclose'd: driver state lives until the process exits.
  return api;
}

}  // namespace

const DriverApi& driver() {
  static const DriverApi api = load();
  return api;
}

}  // namespace moetune::gpu::cuda
