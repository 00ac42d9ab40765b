#include "autotune/io/csv_table.hpp"

#include <fmt/format.h>

#include <optional>
#include <set>
#include <utility>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"

namespace moetune::io {
namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 if it is not valid UTF-8.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  auto const byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char const lead = byte(i);
  std::size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
  } else {
    return 0;  // continuation byte, overlong lead (C0/C1) or beyond U+10FFFF
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  // Reject overlong forms and surrogates, which no honest text file contains.
  if (lead == 0xE0 && byte(i + 1) < 0xA0) return 0;
  if (lead == 0xED && byte(i + 1) > 0x9F) return 0;
  if (lead == 0xF0 && byte(i + 1) < 0x90) return 0;
  if (lead == 0xF4 && byte(i + 1) > 0x8F) return 0;
  return length;
}

// Rejects bytes that cannot occur in an AITER table, before any splitting, so that a binary
// or mangled file is reported as such rather than as a confusing field-count error.
void check_bytes(std::string_view text, const std::filesystem::path& file) {
  std::int64_t line = 1;
  std::int64_t column = 1;
  for (std::size_t i = 0; i < text.size(); ++i, ++column) {
    auto const c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      column = 0;
      continue;
    }
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') {
        throw InputError(file, line, column,
                         "CRLF line ending (carriage return before the newline): AITER tables "
                         "use LF line ends; convert the file, e.g. with dos2unix");
      }
      throw InputError(file, line, column,
                       "stray carriage return (0x0D): expected LF line ends and printable text");
    }
    if (c == 0) {
      throw InputError(file, line, column,
                       "binary data: NUL byte (0x00); expected a text CSV file");
    }
    if (c < 0x20 || c == 0x7F) {
      throw InputError(file, line, column,
                       fmt::format("control character 0x{:02X}{}; expected printable text "
                                   "(binary data?)",
                                   c, c == '\t' ? " (tab)" : ""));
    }
    if (c == '"') {
      throw InputError(file, line, column,
                       "quoted field ('\"'): AITER fMoE tables never quote; expected plain "
                       "comma-separated values");
    }
    if (c >= 0x80) {
      std::size_t const length = utf8_sequence_length(text, i);
      if (length == 0) {
        throw InputError(file, line, column,
                         fmt::format("invalid UTF-8 byte 0x{:02X}: binary data? expected a text "
                                     "CSV file",
                                     c));
      }
      i += length - 1;
    }
  }
}

CsvRow split_row(std::string_view line_text, std::int64_t line) {
  CsvRow row;
  row.line = line;
  row.raw = std::string(line_text);
  std::size_t start = 0;
  while (true) {
    std::size_t const comma = line_text.find(',', start);
    std::size_t const end = comma == std::string_view::npos ? line_text.size() : comma;
    row.cells.emplace_back(line_text.substr(start, end - start));
    row.columns.push_back(static_cast<std::int64_t>(start) + 1);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return row;
}

void check_header(const CsvRow& header, const std::filesystem::path& file) {
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < header.cells.size(); ++i) {
    auto const& name = header.cells[i];
    if (name.empty()) {
      throw InputError(file, header.line, header.columns[i],
                       fmt::format("empty column name (column {} of the header)", i + 1));
    }
    if (!seen.insert(name).second) {
      throw InputError(file, header.line, header.columns[i],
                       fmt::format("duplicate column name '{}' in the header", name));
    }
  }
}

// AITER's CSV test (test_no_git_conflict_markers) fails a file that contains any of these
// anywhere in its text, not only at a line start. Returns the marker's offset in the line.
std::optional<std::pair<std::size_t, std::string_view>> find_conflict_marker(
    std::string_view line) {
  for (std::string_view marker : {"<<<<<<<", "=======", ">>>>>>>"}) {
    if (auto const at = line.find(marker); at != std::string_view::npos) {
      return std::pair{at, marker};
    }
  }
  return std::nullopt;
}

}  // namespace

CsvTable::CsvTable(std::filesystem::path file, CsvRow header, std::vector<CsvRow> rows,
                   bool ends_with_newline)
    : m_file(std::move(file)),
      m_header(std::move(header)),
      m_rows(std::move(rows)),
      m_ends_with_newline(ends_with_newline) {}

int CsvTable::column_index(std::string_view name) const {
  for (std::size_t i = 0; i < m_header.cells.size(); ++i) {
    if (m_header.cells[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> split_fields(std::string_view line) { return split_row(line, 0).cells; }

CsvTable parse_csv(std::string_view text, const std::filesystem::path& file,
                   const CsvReadOptions& options) {
  if (text.empty()) {
    throw InputError(file, 1, 1, "empty file: expected a header line of column names");
  }
  check_bytes(text, file);

  bool const ends_with_newline = text.back() == '\n';
  if (ends_with_newline) text.remove_suffix(1);

  std::vector<std::string_view> lines;
  for (std::size_t start = 0;;) {
    std::size_t const nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }

  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto const line = static_cast<std::int64_t>(i) + 1;
    if (auto const marker = find_conflict_marker(lines[i])) {
      throw InputError(file, line, static_cast<std::int64_t>(marker->first) + 1,
                       fmt::format("git merge conflict marker '{}': resolve the merge first "
                                   "(AITER's CSV test rejects a table containing one anywhere)",
                                   marker->second));
    }
  }
  if (lines[0].empty()) throw InputError(file, 1, 1, "empty header line: expected column names");

  CsvRow header = split_row(lines[0], 1);
  check_header(header, file);
  std::size_t const width = header.cells.size();

  std::vector<CsvRow> rows;
  rows.reserve(lines.size() - 1);
  int blank = 0;  // empty lines since the last row: pandas skips them, so AITER does too
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      ++blank;
      continue;
    }
    CsvRow row = split_row(lines[i], static_cast<std::int64_t>(i) + 1);
    row.blank_lines_before = blank;
    blank = 0;
    if (row.size() > width) {
      // Point at the comma that opens the first field the header has no name for.
      throw InputError(file, row.line, row.columns[width] - 1,
                       fmt::format("too many fields: expected {} (as in the header), found {}",
                                   width, row.size()));
    }
    if (row.size() < width) {
      auto const missing = static_cast<int>(width - row.size());
      auto const end_column = static_cast<std::int64_t>(row.raw.size()) + 1;
      if (missing > options.max_missing_fields) {
        throw InputError(file, row.line, end_column,
                         fmt::format("too few fields: expected {} (as in the header), found {}; "
                                     "first missing column is '{}'",
                                     width, row.size(), header.cells[row.size()]));
      }
      row.missing_fields = missing;
      while (row.size() < width) {
        row.cells.emplace_back();
        row.columns.push_back(end_column);
      }
    }
    rows.push_back(std::move(row));
  }
  CsvTable table(file, std::move(header), std::move(rows), ends_with_newline);
  table.set_trailing_blank_lines(blank);
  return table;
}

CsvTable read_csv(const std::filesystem::path& file, const CsvReadOptions& options) {
  return parse_csv(read_file(file), file, options);
}

}  // namespace moetune::io
