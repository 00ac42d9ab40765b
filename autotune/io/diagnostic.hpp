#pragma once
// A finding about an input file, located like a compiler diagnostic. Readers collect warnings
// (and, when validating, errors) as Diagnostics instead of printing them, so that the caller
// decides where they go and `validate` can count them per file.
#include <cstdint>
#include <filesystem>
#include <string>

namespace moetune::io {

enum class Severity { warning, error };

struct Diagnostic {
  Severity severity = Severity::error;
  std::filesystem::path file;
  std::int64_t line = 0;    // 1-based; 0 = the whole file
  std::int64_t column = 0;  // 1-based byte column; 0 = the whole line
  std::string message;

  // "file:line:col: error: message" (line/column omitted when 0).
  [[nodiscard]] std::string format() const;
};

[[nodiscard]] std::string_view to_string(Severity severity);

}  // namespace moetune::io
