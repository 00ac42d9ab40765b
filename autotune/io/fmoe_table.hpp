#pragma once
// A typed fMoE table: every cell of an AITER untuned list, tuned table or fhmoe table
// converted and checked, with problems reported at file:line:column.
//
// Two entry points: read_fmoe_table() for the pipeline (the first error is thrown, so nothing
// is tuned or written from a bad file) and parse_fmoe_file() for `validate` (every problem is
// collected, so one run lists them all).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "autotune/io/csv_table.hpp"
#include "autotune/io/diagnostic.hpp"
#include "autotune/io/fmoe_row.hpp"
#include "autotune/io/fmoe_schema.hpp"

namespace moetune::io {

class FmoeTable {
 public:
  FmoeTable(std::filesystem::path file, FmoeLayout layout, CsvRow header, std::vector<FmoeRow> rows,
            bool ends_with_newline, std::vector<Diagnostic> warnings);

  [[nodiscard]] const std::filesystem::path& file() const { return m_file; }
  [[nodiscard]] FmoeFileKind kind() const { return m_layout.kind; }
  [[nodiscard]] const FmoeLayout& layout() const { return m_layout; }
  // The header as read (or as created): its order is the order rows are written in.
  [[nodiscard]] const CsvRow& header() const { return m_header; }
  [[nodiscard]] const std::vector<std::string>& column_names() const { return m_header.cells; }
  [[nodiscard]] const std::vector<FmoeRow>& rows() const { return m_rows; }
  [[nodiscard]] bool ends_with_newline() const { return m_ends_with_newline; }
  // Empty lines after the last row (pandas skips them), written back unchanged.
  [[nodiscard]] int trailing_blank_lines() const { return m_trailing_blank_lines; }
  void set_trailing_blank_lines(int count) { m_trailing_blank_lines = count; }
  // Warnings found while reading (short rows, unknown columns).
  [[nodiscard]] const std::vector<Diagnostic>& warnings() const { return m_warnings; }

  // The row with this key, or nullptr.
  [[nodiscard]] const FmoeRow* find(const FmoeKey& key) const;
  // Replaces the row with the same key in place (it is then formatted anew when written) or
  // appends it. Returns true if a row was replaced.
  bool upsert(FmoeRow row);
  // Removes the row with this key and returns it (with its line and original text, when read
  // from a file); nullopt if there is none. Every other row keeps its text.
  std::optional<FmoeRow> erase(const FmoeKey& key);

 private:
  std::filesystem::path m_file;
  FmoeLayout m_layout;
  CsvRow m_header;
  std::vector<FmoeRow> m_rows;
  bool m_ends_with_newline;
  int m_trailing_blank_lines = 0;
  std::vector<Diagnostic> m_warnings;
};

struct FmoeParseResult {
  FmoeTable table;                      // rows with an error are left out
  std::vector<Diagnostic> diagnostics;  // warnings and errors, in file order
  std::size_t data_rows = 0;            // rows in the file, good or bad

  [[nodiscard]] std::size_t error_count() const;
  [[nodiscard]] std::size_t warning_count() const;
};

// Converts every row, collecting all problems. Throws FileError or InputError only when the
// file cannot be read as a table at all (missing, binary, CRLF, quotes, bad header, a row
// with a wrong number of fields).
[[nodiscard]] FmoeParseResult parse_fmoe_file(const std::filesystem::path& file);
[[nodiscard]] FmoeParseResult parse_fmoe_csv(const CsvTable& csv);

// Reads a table for use: throws the first error as InputError; warnings are kept in
// FmoeTable::warnings().
[[nodiscard]] FmoeTable read_fmoe_table(const std::filesystem::path& file);

// An empty table of this kind with AITER's newest header, to be filled and written to `file`.
[[nodiscard]] FmoeTable make_fmoe_table(std::filesystem::path file, FmoeFileKind kind);

// The options every fMoE read uses: one missing trailing field is tolerated (real AITER
// files have such rows; pandas pads them), two or more are an error.
[[nodiscard]] CsvReadOptions fmoe_csv_options();

}  // namespace moetune::io
