#include "autotune/io/diagnostic.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::io {

std::string_view to_string(Severity severity) {
  return severity == Severity::error ? "error" : "warning";
}

std::string Diagnostic::format() const {
  return fmt::format("{}: {}: {}", format_location(file, line, column), to_string(severity),
                     message);
}

}  // namespace moetune::io
