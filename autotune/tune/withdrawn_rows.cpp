#include "autotune/tune/withdrawn_rows.hpp"

#include <fmt/format.h>

namespace moetune::tune {

nlohmann::json to_json(std::span<const WithdrawnRow> rows) {
  nlohmann::json out = nlohmann::json::array();
  for (auto const& r : rows) {
    out.push_back({{"file", r.file.string()},
                   {"line", r.line},
                   {"row", r.text},
                   {"key", r.key},
                   {"reason", r.reason}});
  }
  return out;
}

std::string withdrawn_rows_markdown(std::span<const WithdrawnRow> rows) {
  if (rows.empty()) return {};
  std::string out = fmt::format(
      "\n## Withdrawn rows\n\nThese buckets no longer qualify, so their earlier rows were "
      "removed from the tuned table ({} row(s)):\n\n",
      rows.size());
  for (auto const& r : rows) {
    out += fmt::format("- {}:{}: `{}` — {}\n", r.file.string(), r.line, r.text, r.reason);
  }
  return out;
}

std::string withdrawn_rows_console(std::span<const WithdrawnRow> rows) {
  std::string out;
  for (auto const& r : rows) {
    out += fmt::format("withdrawn: {}:{}: {} ({})\n", r.file.string(), r.line, r.text, r.reason);
  }
  return out;
}

}  // namespace moetune::tune
