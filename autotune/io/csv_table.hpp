#pragma once
// The raw CSV layer: a file split into a header and rows of text cells, each row remembering
// where it came from (line number, original text, the column of every cell) so that later
// layers can point at the exact byte of a bad value and write untouched rows back verbatim.
//
// Deliberately strict. AITER's fMoE tables are plain comma-separated ASCII with LF line ends
// and never quote a field; anything else (CRLF from an editor, quotes from a spreadsheet, NUL
// bytes from a truncated copy) means the file is not what the user thinks it is, and silently
// "fixing" it would hide that. Every rejection is an InputError naming file, line and column.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace moetune::io {

struct CsvRow {
  std::int64_t line = 0;              // 1-based line number in the file
  std::string raw;                    // the line as read, without its '\n'
  std::vector<std::string> cells;     // one per header column (after any padding)
  std::vector<std::int64_t> columns;  // 1-based byte column where each cell starts
  int missing_fields = 0;             // empty cells appended because the line was short
  int blank_lines_before = 0;         // empty lines just above this row (pandas skips them)

  [[nodiscard]] std::size_t size() const { return cells.size(); }
};

struct CsvReadOptions {
  // How many trailing fields a data row may lack; they are padded with empty cells (what
  // pandas, and therefore AITER, does). More missing fields are an error.
  int max_missing_fields = 0;
};

class CsvTable {
 public:
  CsvTable(std::filesystem::path file, CsvRow header, std::vector<CsvRow> rows,
           bool ends_with_newline);

  [[nodiscard]] const std::filesystem::path& file() const { return m_file; }
  [[nodiscard]] const CsvRow& header() const { return m_header; }
  [[nodiscard]] const std::vector<std::string>& column_names() const { return m_header.cells; }
  [[nodiscard]] const std::vector<CsvRow>& rows() const { return m_rows; }
  // Some real AITER files lack the final '\n'; remembering it keeps a rewrite byte-identical.
  [[nodiscard]] bool ends_with_newline() const { return m_ends_with_newline; }
  // Empty lines after the last row (pandas, and so AITER, skips them); kept for a rewrite.
  [[nodiscard]] int trailing_blank_lines() const { return m_trailing_blank_lines; }
  void set_trailing_blank_lines(int count) { m_trailing_blank_lines = count; }
  // Index of a column by name, or -1.
  [[nodiscard]] int column_index(std::string_view name) const;

 private:
  std::filesystem::path m_file;
  CsvRow m_header;
  std::vector<CsvRow> m_rows;
  bool m_ends_with_newline;
  int m_trailing_blank_lines = 0;
};

// Parses `text`; `file` is only used in messages. Throws InputError.
[[nodiscard]] CsvTable parse_csv(std::string_view text, const std::filesystem::path& file,
                                 const CsvReadOptions& options = {});

// Reads and parses a file. Throws FileError if it cannot be read, InputError if it is not a
// well-formed table.
[[nodiscard]] CsvTable read_csv(const std::filesystem::path& file,
                                const CsvReadOptions& options = {});

// Splits one line at commas (no quoting). Exposed for the writer and tests.
[[nodiscard]] std::vector<std::string> split_fields(std::string_view line);

}  // namespace moetune::io
