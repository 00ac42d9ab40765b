#include "autotune/gpu/check.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::gpu::detail {

void throw_gpu_error(vendor::status_t status, const char* function, const char* arguments,
                     const Device* device, std::source_location where) {
  throw GpuError(fmt::format("{}({})", function, arguments), static_cast<int>(status),
                 vendor::error_name(status), vendor::error_text(status),
                 device != nullptr ? device->name() : std::string(), where);
}

}  // namespace moetune::gpu::detail
