#include "autotune/tune/journaled_row.hpp"

#include <fmt/format.h>

namespace moetune::tune {

namespace {

// The winning pipeline's outcome as the bucket's report states it ("" when it names none).
std::string winner_outcome(const nlohmann::json& report) {
  auto const winner = report.find("winner");
  auto const pipelines = report.find("pipelines");
  if (winner == report.end() || !winner->is_string() || pipelines == report.end() ||
      !pipelines->is_array()) {
    return {};
  }
  for (auto const& p : *pipelines) {
    if (p.is_object() && p.value("name", std::string()) == winner->get<std::string>()) {
      return p.value("outcome", std::string());
    }
  }
  return {};
}

// Empty when the entry is a consistent qualification or a plain non-qualified decision.
std::string inconsistency(const JournalEntry& e, const io::FmoeKey& expected_key) {
  if (!e.qualified) {
    return e.row ? "it carries a row but its verdict is not qualified" : std::string();
  }
  if (!e.row) return "its verdict is qualified but it carries no row";
  bool const report_qualified = e.report.is_object() && e.report.value("qualified", false);
  if (!report_qualified) return "its report's verdict is not qualified";
  if (auto const outcome = winner_outcome(e.report); outcome != "qualified") {
    return fmt::format("its report's winning pipeline has outcome '{}', not 'qualified'",
                       outcome.empty() ? "(none)" : outcome);
  }
  if (e.row->key != expected_key) {
    return fmt::format("its row's key ({}) is not this bucket's on this machine ({})",
                       e.row->key.describe(), expected_key.describe());
  }
  return {};
}

}  // namespace

JournaledRow journaled_row(const JournalEntry& entry, const io::FmoeKey& bucket_key,
                           const RowContext& context, const std::filesystem::path& journal_file) {
  JournaledRow out;
  auto const problem = inconsistency(entry, tuned_row_key(bucket_key, context));
  if (!problem.empty()) {
    std::string const where = entry.journal_line > 0
                                  ? fmt::format("{}:{}", journal_file.string(), entry.journal_line)
                                  : fmt::format("{} (measured in this run)", journal_file.string());
    out.warning = fmt::format("{}: bucket {}: {}; no row is written for it", where,
                              bucket_key.describe(), problem);
  } else if (entry.qualified) {
    out.row = entry.row;
  }
  return out;
}

}  // namespace moetune::tune
