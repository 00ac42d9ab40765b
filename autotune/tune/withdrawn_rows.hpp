#pragma once
// Rows a re-tune took out of its tuned table (issue #12: "rows only from qualified
// decisions"). A bucket decided in this run without a row must not leave an older row of the
// same key behind: AITER would go on using a configuration this run no longer qualifies. Each
// removal is stated where a reviewer looks: printed, in report.json (`withdrawn_rows`) and in
// summary.md, with the line as it was, so the change can be undone by hand.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace moetune::tune {

struct WithdrawnRow {
  std::filesystem::path file;  // the tuned table it was removed from
  std::int64_t line = 0;       // its line there before the removal
  std::string text;            // the CSV line, byte for byte
  std::string key;             // io::FmoeKey::describe()
  std::string reason;          // why this run has no row for the key
};

// [{"file", "line", "row", "key", "reason"}, ...]
[[nodiscard]] nlohmann::json to_json(std::span<const WithdrawnRow> rows);

// A summary.md section listing them; empty when nothing was withdrawn.
[[nodiscard]] std::string withdrawn_rows_markdown(std::span<const WithdrawnRow> rows);

// One line per row for the console: "withdrawn: FILE:LINE: TEXT (REASON)".
[[nodiscard]] std::string withdrawn_rows_console(std::span<const WithdrawnRow> rows);

}  // namespace moetune::tune
