#include <fmt/format.h>

#include <utility>

#include "autotune/core/error.hpp"
#include "autotune/gpu/check.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu {

Module::Module(const Device& device, std::span<const std::byte> image) : m_device(&device) {
  if (image.empty()) throw Error("Module: empty code object");
  vendor::module_t module{};
  MOETUNE_GPU_CALL(m_device, module_load_data, &module, image.data());
  m_handle = module;
}

Module::~Module() { release(); }

Module::Module(Module&& other) noexcept
    : m_device(other.m_device), m_handle(std::exchange(other.m_handle, nullptr)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    release();
    m_device = other.m_device;
    m_handle = std::exchange(other.m_handle, nullptr);
  }
  return *this;
}

void Module::release() noexcept {
  if (m_handle != nullptr) (void)vendor::module_unload(static_cast<vendor::module_t>(m_handle));
  m_handle = nullptr;
}

Kernel Module::function(const std::string& lowered_name) const {
  vendor::function_t function{};
  vendor::status_t const status = vendor::module_get_function(
      &function, static_cast<vendor::module_t>(m_handle), lowered_name.c_str());
  // The argument text names the symbol: "not found" is useless without it.
  std::string const arguments = fmt::format("&function, module, \"{}\"", lowered_name);
  detail::check(status, vendor::module_get_function_name, arguments.c_str(), m_device);
  return Kernel(*m_device, function, lowered_name);
}

void Kernel::launch(Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
                    const Stream& stream, void** args, LaunchOrder order) const {
  launch(grid, block, dynamic_shared_bytes, ExternalStream{stream.native_handle()}, args, order);
}

void Kernel::launch(Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
                    ExternalStream stream, void** args, LaunchOrder order) const {
  bool const early = order == LaunchOrder::early_start && m_device->info().early_start_launches;
  vendor::status_t const status =
      early ? vendor::launch_kernel_early_start(
                  static_cast<vendor::function_t>(m_function), grid.x, grid.y, grid.z, block.x,
                  block.y, block.z, static_cast<unsigned>(dynamic_shared_bytes),
                  static_cast<vendor::stream_t>(stream.native_handle), args)
            : vendor::launch_kernel(static_cast<vendor::function_t>(m_function), grid.x, grid.y,
                                    grid.z, block.x, block.y, block.z,
                                    static_cast<unsigned>(dynamic_shared_bytes),
                                    static_cast<vendor::stream_t>(stream.native_handle), args,
                                    nullptr);
  if (status != vendor::success) {
    // Launch errors are about the configuration: put it in the message.
    std::string const arguments =
        fmt::format("{}, grid=({},{},{}), block=({},{},{}), dynamic_shared={}", m_name, grid.x,
                    grid.y, grid.z, block.x, block.y, block.z, dynamic_shared_bytes);
    detail::check(status, early ? vendor::launch_kernel_early_start_name : vendor::launch_kernel_name,
                  arguments.c_str(), m_device);
  }
}

void Kernel::set_max_dynamic_shared_bytes(std::size_t bytes) const {
#if defined(MOETUNE_BACKEND_CUDA)
  MOETUNE_GPU_CALL(m_device, func_set_max_dynamic_shared,
                   static_cast<vendor::function_t>(m_function), static_cast<int>(bytes));
#else
  auto const limit = m_device->info().shared_memory_per_block_optin_bytes;
  if (static_cast<std::int64_t>(bytes) > limit) {
    throw Error(fmt::format("{}: {} bytes of dynamic LDS requested, device {} allows {}", m_name,
                            bytes, m_device->name(), limit));
  }
#endif
}

KernelAttributes Kernel::attributes() const {
  auto const function = static_cast<vendor::function_t>(m_function);
  KernelAttributes out;
  MOETUNE_GPU_CALL(m_device, func_get_attribute, &out.registers, vendor::attr_num_regs, function);
  MOETUNE_GPU_CALL(m_device, func_get_attribute, &out.static_shared_bytes,
                   vendor::attr_shared_bytes, function);
  MOETUNE_GPU_CALL(m_device, func_get_attribute, &out.local_bytes, vendor::attr_local_bytes,
                   function);
  MOETUNE_GPU_CALL(m_device, func_get_attribute, &out.max_threads_per_block,
                   vendor::attr_max_threads, function);
  return out;
}

}  // namespace moetune::gpu
