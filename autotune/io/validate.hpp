#pragma once
// `moe-tune validate FILE...`: every check moe-tune knows for AITER fMoE tables, over any
// number of files at once (duplicate keys are looked for across all of them, because AITER
// loads several tables into one lookup).
//
// Exit codes: 0 clean (warnings allowed), 1 at least one error-level finding, 2 at least one
// file that could not be read as a table at all (missing, binary, CRLF, quoted, bad header,
// wrong number of fields). See docs/formats.md for the list of checks.
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "autotune/io/diagnostic.hpp"
#include "autotune/io/fmoe_schema.hpp"

namespace moetune::io {

struct FileSummary {
  std::filesystem::path file;
  bool readable = false;
  std::optional<FmoeFileKind> kind;  // set when readable
  std::size_t rows = 0;              // data rows in the file
  std::size_t errors = 0;
  std::size_t warnings = 0;
};

struct ValidationReport {
  std::vector<Diagnostic> findings;  // grouped by file (in the order given), then by line
  std::vector<FileSummary> files;

  [[nodiscard]] std::size_t error_count() const;
  [[nodiscard]] std::size_t warning_count() const;
  // 0 clean, 1 errors, 2 unreadable input.
  [[nodiscard]] int exit_code() const;
};

[[nodiscard]] ValidationReport validate_files(const std::vector<std::filesystem::path>& files);

// Every finding in compiler-diagnostic style ("file:line:col: error: ..."), each file followed
// by a one-line summary ("file: ok: 168 rows, 8 warnings"), then a total line.
void print_report(const ValidationReport& report, std::FILE* out);

}  // namespace moetune::io
