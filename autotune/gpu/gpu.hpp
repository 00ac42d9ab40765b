#pragma once
// The GPU layer's public API: one device, its memory, streams, events, graphs and modules,
// identical for the CUDA backend (driver API, loaded with dlopen) and the HIP backend (HIP
// runtime). No vendor header leaks out of here: handles are opaque, and the real differences
// between vendors (wave size, arch string, code-object format) are typed fields of DeviceInfo.
//
// Threading: a Device binds its context to the thread that opened it. Another thread that
// wants to use it calls device.make_current() first. Every object below keeps a reference to
// its Device, which must outlive it.
//
// Errors: every failing vendor call throws moetune::GpuError naming the call, the vendor's
// error name and text, the device and our source location.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moetune::gpu {

enum class Vendor { nvidia, amd };

[[nodiscard]] std::string_view to_string(Vendor vendor);

// Everything a report, a cache key or a search-space rule needs to know about the device.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;             // "NVIDIA H200", "AMD Instinct MI300X"
  std::string arch;             // compile target family: "sm_90", "gfx942", "gfx950"
  Vendor vendor = Vendor::nvidia;
  int compute_units = 0;        // SMs (NVIDIA) or CUs (AMD)
  std::int64_t l2_bytes = 0;
  int wave_size = 32;           // 32 (warp) or 64 (wavefront)
  int sm_clock_khz = 0;         // maximum shader clock
  int memory_clock_khz = 0;     // peak memory clock
  int memory_bus_width_bits = 0;
  std::int64_t global_memory_bytes = 0;
  std::int64_t shared_memory_per_block_bytes = 0;        // without opting in
  std::int64_t shared_memory_per_block_optin_bytes = 0;  // the most a kernel may opt in to
  int max_threads_per_block = 0;
  std::string pci_bus_id;       // "0000:3b:00.0", to tell identical boards apart in reports
  std::string driver_version;   // "13.0 (kernel module 580.65.06)" / HIP driver version
  std::string runtime_version;  // driver-API / HIP runtime version the binary was built for
  bool early_start_launches = false;  // LaunchOrder::early_start is honoured (CUDA, sm_90+)
};

// grid and block extents of a launch
struct Dim3 {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};

struct MemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

// Opens one GPU and holds its context (CUDA: the device's primary context, so that other
// libraries in the process share it; HIP: hipSetDevice). Neither copyable nor movable,
// because every other object refers to it.
class Device {
 public:
  explicit Device(int ordinal = 0);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&&) = delete;
  Device& operator=(Device&&) = delete;

  [[nodiscard]] const DeviceInfo& info() const { return m_info; }
  [[nodiscard]] const std::string& name() const { return m_info.name; }
  [[nodiscard]] int ordinal() const { return m_info.ordinal; }

  // Binds this device's context to the calling thread (needed once per extra thread).
  void make_current() const;
  // Waits for all work on the device; a kernel fault surfaces here as a GpuError.
  void synchronize() const;
  [[nodiscard]] MemoryInfo memory_info() const;

  // Backend context handle (CUcontext; null for HIP). For interop only.
  [[nodiscard]] void* native_context() const { return m_context; }

 private:
  void read_info(int native_device, int ordinal);

  DeviceInfo m_info;
  void* m_context = nullptr;
};

class Stream;
class GraphExec;
struct ExternalStream;

// An ordered queue of GPU work. Created non-blocking so that it never synchronises with the
// legacy default stream that other libraries may use.
class Stream {
 public:
  explicit Stream(const Device& device);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void synchronize() const;
  [[nodiscard]] const Device& device() const { return *m_device; }
  [[nodiscard]] void* native_handle() const { return m_handle; }

 private:
  const Device* m_device;
  void* m_handle = nullptr;
};

// Device memory, freed on destruction. Offsets and sizes are in bytes; every transfer is
// range-checked on the host first, so an out-of-range copy is our error, not a driver fault.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const Device& device, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // The device address, as a kernel argument expects it (pass &ptr in the args array).
  [[nodiscard]] void* data() const { return m_ptr; }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(m_ptr);
  }
  [[nodiscard]] std::size_t size() const { return m_bytes; }
  [[nodiscard]] bool empty() const { return m_bytes == 0; }

  // Synchronous transfers (return when the copy is complete).
  void upload(std::span<const std::byte> host, std::size_t offset = 0);
  void download(std::span<std::byte> host, std::size_t offset = 0) const;
  void memset(std::uint8_t value);
  void memset(std::uint8_t value, std::size_t offset, std::size_t bytes);
  void copy_from(const DeviceBuffer& source);

  // Stream-ordered transfers. The host memory must stay alive until the stream reaches them
  // (pageable host memory makes these effectively synchronous; that is fine for set-up).
  void upload_async(std::span<const std::byte> host, const Stream& stream,
                    std::size_t offset = 0);
  void download_async(std::span<std::byte> host, const Stream& stream,
                      std::size_t offset = 0) const;
  void memset_async(std::uint8_t value, const Stream& stream);
  void copy_from_async(const DeviceBuffer& source, const Stream& stream);

  // Typed conveniences.
  template <class T>
  void upload(std::span<const T> values, std::size_t offset = 0) {
    upload(std::as_bytes(values), offset);
  }
  template <class T>
  void upload(const std::vector<T>& values, std::size_t offset = 0) {
    upload(std::as_bytes(std::span<const T>(values)), offset);
  }
  template <class T>
  [[nodiscard]] std::vector<T> download_as() const {
    std::vector<T> out(m_bytes / sizeof(T));
    download(std::as_writable_bytes(std::span<T>(out)));
    return out;
  }

 private:
  void release() noexcept;
  void check_range(std::size_t offset, std::size_t bytes, const char* what) const;

  const Device* m_device = nullptr;
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

// Synchronous copies between the host and device memory this layer did not allocate (an
// engine's tensors): `device_address` is a device pointer of `device`'s context.
void copy_device_to_host(const Device& device, const void* device_address, std::span<std::byte> host);
void copy_host_to_device(const Device& device, void* device_address, std::span<const std::byte> host);

// A point in a stream's work; two recorded events give the GPU time between them.
class Event {
 public:
  explicit Event(const Device& device);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(const Stream& stream);
  void synchronize() const;
  // True once the GPU has passed the recorded point.
  [[nodiscard]] bool query() const;
  [[nodiscard]] const Device& device() const { return *m_device; }
  [[nodiscard]] void* native_handle() const { return m_handle; }

 private:
  const Device* m_device;
  void* m_handle = nullptr;
};

// Milliseconds of GPU time from `start` to `stop` (both recorded and complete).
[[nodiscard]] float elapsed_ms(const Event& start, const Event& stop);

// An instantiated graph: a captured sequence of launches that replays with one call.
class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec();
  GraphExec(GraphExec&& other) noexcept;
  GraphExec& operator=(GraphExec&& other) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;

  void launch(const Stream& stream) const;
  void launch(ExternalStream stream) const;  // an engine's stream (never one being captured)
  [[nodiscard]] bool valid() const { return m_exec != nullptr; }

 private:
  friend class GraphCapture;
  GraphExec(const Device& device, void* graph, void* exec)
      : m_device(&device), m_graph(graph), m_exec(exec) {}
  void release() noexcept;

  const Device* m_device = nullptr;
  void* m_graph = nullptr;
  void* m_exec = nullptr;
};

// Captures the work queued on `stream` between construction and finish() into a graph.
// Capture is thread-local, so other threads' GPU calls are not disturbed. If finish() is never
// reached (an exception in between), the destructor ends the capture and discards it, leaving
// the stream usable.
class GraphCapture {
 public:
  explicit GraphCapture(Stream& stream);
  ~GraphCapture();
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

  [[nodiscard]] GraphExec finish();

 private:
  Stream* m_stream;
  bool m_active = false;
};

// Per-function figures the driver reports for a loaded kernel.
struct KernelAttributes {
  int registers = 0;
  int static_shared_bytes = 0;
  int local_bytes = 0;  // spill / scratch per thread
  int max_threads_per_block = 0;
};

// A stream another library created and owns (an engine's CUstream / hipStream_t, a torch
// stream): launched on, never created or destroyed here. Null is the legacy default stream.
struct ExternalStream {
  void* native_handle = nullptr;
};

// Whether work queued on `stream` is being captured into a graph (an engine capturing its
// step) rather than run: a graph cannot be launched into a capture.
[[nodiscard]] bool is_capturing(const Device& device, ExternalStream stream);

// How a launch is ordered against the kernel before it on the same stream.
enum class LaunchOrder {
  // Starts once the previous kernel has finished (the stream's ordinary order).
  serial,
  // May be scheduled while the previous kernel still runs (CUDA's programmatic dependent
  // launch, sm_90 and later), so its launch and start-up overlap that kernel's tail. Only for
  // kernels that call wait_for_previous_kernel() (kernels/moetune_portability.h) before they
  // touch global memory; the MoE's kernels do. Where the device or backend lacks it (HIP,
  // NVIDIA before sm_90) it is `serial`.
  early_start,
};

// A __global__ function of a loaded module.
class Kernel {
 public:
  // args: one pointer per kernel parameter, pointing at the argument's value.
  void launch(Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes, const Stream& stream,
              void** args, LaunchOrder order = LaunchOrder::serial) const;
  void launch(Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes, ExternalStream stream,
              void** args, LaunchOrder order = LaunchOrder::serial) const;
  // Opts the kernel in to more than the default dynamic shared memory (48 KiB on NVIDIA).
  void set_max_dynamic_shared_bytes(std::size_t bytes) const;
  [[nodiscard]] KernelAttributes attributes() const;
  [[nodiscard]] const std::string& name() const { return m_name; }
  [[nodiscard]] void* native_handle() const { return m_function; }

 private:
  friend class Module;
  Kernel(const Device& device, void* function, std::string name)
      : m_device(&device), m_function(function), m_name(std::move(name)) {}

  const Device* m_device;
  void* m_function;
  std::string m_name;
};

// A code object (cubin for NVIDIA, an AMDGPU ELF for AMD) loaded onto the device.
// Kernels obtained from it are valid while the module lives.
class Module {
 public:
  Module(const Device& device, std::span<const std::byte> image);
  ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Looks up a kernel by its lowered (mangled) name; throws GpuError if it is not there.
  [[nodiscard]] Kernel function(const std::string& lowered_name) const;

 private:
  void release() noexcept;

  const Device* m_device;
  void* m_handle = nullptr;
};

}  // namespace moetune::gpu
