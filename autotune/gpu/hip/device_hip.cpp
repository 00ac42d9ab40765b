// Device for the HIP backend: hipSetDevice on the opening thread and DeviceInfo from
// hipDeviceProp_t (the arch comes from gcnArchName, "gfx942:sramecc+:xnack-" -> "gfx942").
#include <fmt/format.h>

#include <array>
#include <string>

#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {
namespace vendor {

const char* error_name(status_t status) { return hipGetErrorName(status); }
const char* error_text(status_t status) { return hipGetErrorString(status); }

// Set-up calls used only here.
inline constexpr char set_device_name[] = "hipSetDevice";
inline status_t set_device(int ordinal) { return hipSetDevice(ordinal); }
inline constexpr char get_device_properties_name[] = "hipGetDeviceProperties";
inline status_t get_device_properties(hipDeviceProp_t* props, int ordinal) {
  return hipGetDeviceProperties(props, ordinal);
}
inline constexpr char device_get_attribute_name[] = "hipDeviceGetAttribute";
inline status_t device_get_attribute(int* value, hipDeviceAttribute_t which, int ordinal) {
  return hipDeviceGetAttribute(value, which, ordinal);
}
inline constexpr char driver_get_version_name[] = "hipDriverGetVersion";
inline status_t driver_get_version(int* version) { return hipDriverGetVersion(version); }
inline constexpr char runtime_get_version_name[] = "hipRuntimeGetVersion";
inline status_t runtime_get_version(int* version) { return hipRuntimeGetVersion(version); }
inline constexpr char device_get_pci_bus_id_name[] = "hipDeviceGetPCIBusId";
inline status_t device_get_pci_bus_id(char* out, int length, int ordinal) {
  return hipDeviceGetPCIBusId(out, length, ordinal);
}

}  // namespace vendor

namespace {

// HIP encodes versions as major * 10'000'000 + minor * 100'000 + patch.
std::string hip_version_string(int version) {
  return fmt::format("{}.{}.{}", version / 10'000'000, version / 100'000 % 100, version % 100'000);
}

}  // namespace

Device::Device(int ordinal) {
  MOETUNE_GPU_CALL(nullptr, set_device, ordinal);
  read_info(ordinal, ordinal);
}

void Device::read_info(int /*native_device*/, int ordinal) {
  hipDeviceProp_t props{};
  MOETUNE_GPU_CALL(nullptr, get_device_properties, &props, ordinal);

  DeviceInfo& info = m_info;
  info.ordinal = ordinal;
  info.vendor = Vendor::amd;
  info.name = props.name;
  std::string arch = props.gcnArchName;
  info.arch = arch.substr(0, arch.find(':'));
  info.compute_units = props.multiProcessorCount;
  info.l2_bytes = props.l2CacheSize;
  info.wave_size = props.warpSize;
  info.sm_clock_khz = props.clockRate;
  info.memory_clock_khz = props.memoryClockRate;
  info.memory_bus_width_bits = props.memoryBusWidth;
  info.global_memory_bytes = static_cast<std::int64_t>(props.totalGlobalMem);
  info.shared_memory_per_block_bytes = static_cast<std::int64_t>(props.sharedMemPerBlock);
  // AMD has no opt-in step: a kernel may use all LDS a workgroup can address.
  info.shared_memory_per_block_optin_bytes = static_cast<std::int64_t>(props.sharedMemPerBlock);
  info.max_threads_per_block = props.maxThreadsPerBlock;
  std::array<char, 64> bus_id{};
  MOETUNE_GPU_CALL(this, device_get_pci_bus_id, bus_id.data(), static_cast<int>(bus_id.size()),
                   ordinal);
  info.pci_bus_id = bus_id.data();

  int driver_version = 0;
  MOETUNE_GPU_CALL(this, driver_get_version, &driver_version);
  info.driver_version = hip_version_string(driver_version);
  int runtime_version = 0;
  MOETUNE_GPU_CALL(this, runtime_get_version, &runtime_version);
  info.runtime_version = "HIP runtime " + hip_version_string(runtime_version);
}

// The HIP runtime owns its contexts; nothing to release.
Device::~Device() = default;

void Device::make_current() const { MOETUNE_GPU_CALL(this, set_device, m_info.ordinal); }

}  // namespace moetune::gpu
