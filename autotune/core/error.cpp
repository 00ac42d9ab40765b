#include "autotune/core/error.hpp"

#include <fmt/format.h>

namespace moetune {

std::string format_location(const std::filesystem::path& file, std::int64_t line,
                            std::int64_t column) {
  std::string out = file.string();
  if (line > 0) {
    out += fmt::format(":{}", line);
    if (column > 0) out += fmt::format(":{}", column);
  }
  return out;
}

InputError::InputError(std::filesystem::path file, std::int64_t line, std::int64_t column,
                       std::string message)
    : Error(fmt::format("{}: error: {}", format_location(file, line, column), message)),
      m_file(std::move(file)),
      m_line(line),
      m_column(column),
      m_message(std::move(message)) {}

FileError::FileError(std::filesystem::path file, std::string action, std::string reason)
    : Error(fmt::format("{}: error: cannot {}: {}", file.string(), action, reason)),
      m_file(std::move(file)) {}

GpuError::GpuError(std::string call, int code, std::string code_name, std::string code_text,
                   std::string device, std::source_location where)
    : Error(fmt::format("{} failed with {} ({}): {} [device: {}; at {}:{}]", call, code_name, code,
                        code_text, device.empty() ? "none" : device,
                        std::filesystem::path(where.file_name()).filename().string(),
                        where.line())),
      m_code(code),
      m_code_name(std::move(code_name)) {}

}  // namespace moetune
