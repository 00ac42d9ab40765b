// Device for the CUDA backend: the device's primary context (shared with any other library in
// the process, e.g. a profiler) and its DeviceInfo from the driver's attributes.
#include <fmt/format.h>

#include <array>
#include <fstream>
#include <regex>
#include <string>

#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {
namespace vendor {

const char* error_name(status_t status) {
  const char* text = nullptr;
  if (cuda::driver().cuGetErrorName(status, &text) != CUDA_SUCCESS || text == nullptr) {
    return "CUDA_ERROR_UNRECOGNIZED";
  }
  return text;
}

const char* error_text(status_t status) {
  const char* text = nullptr;
  if (cuda::driver().cuGetErrorString(status, &text) != CUDA_SUCCESS || text == nullptr) {
    return "unrecognized error code";
  }
  return text;
}

}  // namespace vendor

namespace {

std::string version_string(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

// The kernel module's version (e.g. 580.65.06) is what NVIDIA calls "the driver version"; the
// driver API only reports the CUDA version it supports, so read it from procfs if present.
std::string kernel_module_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  std::smatch match;
  static const std::regex pattern(R"((\d+\.\d+(\.\d+)?))");
  if (std::regex_search(line, match, pattern)) return match[1].str();
  return {};
}

}  // namespace

Device::Device(int ordinal) {
  auto const& api = cuda::driver();
  MOETUNE_GPU_CALL(nullptr, init_driver, 0U);
  CUdevice device{};
  MOETUNE_GPU_CALL(nullptr, get_device, &device, ordinal);
  CUcontext context{};
  MOETUNE_GPU_CALL(nullptr, primary_ctx_retain, &context, device);
  m_context = context;
  // A constructor that throws runs no destructor: release the retained context by hand.
  try {
    MOETUNE_GPU_CALL(nullptr, ctx_set_current, context);
    read_info(device, ordinal);
  } catch (...) {
    (void)api.cuDevicePrimaryCtxRelease(device);
    throw;
  }
}

void Device::read_info(int native_device, int ordinal) {
  CUdevice const device = native_device;

  DeviceInfo& info = m_info;
  info.ordinal = ordinal;
  info.vendor = Vendor::nvidia;
  std::array<char, 256> name{};
  MOETUNE_GPU_CALL(nullptr, device_get_name, name.data(), static_cast<int>(name.size()), device);
  info.name = name.data();

  auto const attribute = [&](CUdevice_attribute which) {
    int value = 0;
    MOETUNE_GPU_CALL(this, device_get_attribute, &value, which, device);
    return value;
  };
  int const major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  int const minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.arch = fmt::format("sm_{}{}", major, minor);
  info.compute_units = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.early_start_launches = major >= 9;  // programmatic dependent launch: compute 9.0 and later
  info.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.wave_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info.sm_clock_khz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_khz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.memory_bus_width_bits = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info.shared_memory_per_block_bytes = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.shared_memory_per_block_optin_bytes =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  std::size_t total = 0;
  MOETUNE_GPU_CALL(this, device_total_mem, &total, device);
  info.global_memory_bytes = static_cast<std::int64_t>(total);
  std::array<char, 64> bus_id{};
  MOETUNE_GPU_CALL(this, device_get_pci_bus_id, bus_id.data(), static_cast<int>(bus_id.size()),
                   device);
  info.pci_bus_id = bus_id.data();

  int driver_version = 0;
  MOETUNE_GPU_CALL(this, driver_get_version, &driver_version);
  info.driver_version = version_string(driver_version);
  if (auto const module = kernel_module_version(); !module.empty()) {
    info.driver_version += fmt::format(" (kernel module {})", module);
  }
  info.runtime_version = "CUDA driver API " + version_string(CUDA_VERSION);
}

Device::~Device() {
  CUdevice device{};
  if (cuda::driver().cuDeviceGet(&device, m_info.ordinal) == CUDA_SUCCESS) {
    (void)cuda::driver().cuDevicePrimaryCtxRelease(device);
  }
}

void Device::make_current() const {
  MOETUNE_GPU_CALL(this, ctx_set_current, static_cast<CUcontext>(m_context));
}

}  // namespace moetune::gpu
