#include "autotune/io/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <tuple>

#include "autotune/core/error.hpp"
#include "autotune/io/cell_values.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/number_format.hpp"

namespace moetune::io {
namespace {

struct Place {
  std::filesystem::path file;
  std::int64_t line = 0;
};

// Keys live in separate namespaces for lists and tables (an untuned list naturally repeats
// the shapes of the tuned table made from it) and for each family (AITER reads fMoE, fhmoe and
// grouped-MoE tables through separate lookups).
using KeySpace = std::map<std::tuple<FmoeFamily, bool, FmoeKey>, Place>;

std::int64_t column_of(const FmoeTable& table, const FmoeRow& row, Column c) {
  int const at = table.layout().at(c);
  if (at < 0 || static_cast<std::size_t>(at) >= row.columns.size()) return 0;
  return row.columns[static_cast<std::size_t>(at)];
}

std::string plural(std::size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

void check_token(const FmoeTable& table, const FmoeRow& row, std::vector<Diagnostic>& out) {
  auto const token = row.key.token;
  if (is_power_of_two(token)) return;
  std::int64_t next = 1;
  while (next < token) next <<= 1;
  out.push_back({Severity::warning, table.file(), row.line, column_of(table, row, Column::token),
                 fmt::format("token {} is not a power of two: AITER rounds the runtime M up to "
                             "the next power of two ({}) before the lookup, so this row is "
                             "never used",
                             token, next)});
}

// The file AITER's CSV test checks times in: its main fMoE tuned table.
bool is_main_tuned_table(const FmoeTable& table) {
  return table.kind() == FmoeFileKind::tuned && table.file().filename() == "tuned_fmoe.csv";
}

// AITER's test_no_invalid_times requires us > 0 in its main tuned_fmoe.csv (blank us passes:
// pandas reads it as NaN); that is an error there. Model tables are not checked by that test,
// and real ones hold pinned configurations with all-zero times, so there it is a warning.
void check_times(const FmoeTable& table, const FmoeRow& row, std::vector<Diagnostic>& out) {
  auto const& t = *row.tuned;
  if (!t.us) return;
  auto const col = column_of(table, row, Column::us);
  if (*t.us <= 0.0) {
    auto const& cell = row.cells[static_cast<std::size_t>(table.layout().at(Column::us))];
    if (is_main_tuned_table(table)) {
      out.push_back({Severity::error, table.file(), row.line, col,
                     fmt::format("column 'us': expected a positive total time in the main "
                                 "tuned table (AITER's CSV test rejects us <= 0 in "
                                 "tuned_fmoe.csv; us1 + us2 = {}), found '{}'",
                                 format_us(t.us1.value_or(0) + t.us2.value_or(0)), cell)});
    } else {
      out.push_back({Severity::warning, table.file(), row.line, col,
                     fmt::format("us is '{}': no positive time recorded (a pinned "
                                 "configuration, not a measurement); AITER's CSV test would "
                                 "reject it in the main tuned_fmoe.csv",
                                 cell)});
    }
    return;
  }
  if (t.us1 && t.us2) {
    double const expected = total_us(*t.us1, *t.us2);
    if (std::abs(*t.us - expected) > 1e-3 + 1e-6 * expected) {
      out.push_back(
          {Severity::warning, table.file(), row.line, col,
           fmt::format("us {} is not us1 + us2 = {}", format_us(*t.us), format_us(expected))});
    }
  }
}

// AITER's test_flydsl_stage2_sort_block_matches_fmoe_config: a FlyDSL stage-two kernel reads
// the sorted token layout stage one produced, whose block is its _sbm<N> or else its tile M.
void check_sort_block(const FmoeTable& table, const FmoeRow& row, std::vector<Diagnostic>& out) {
  auto const& t = *row.tuned;
  if (!t.kernel_name2.starts_with("flydsl_moe2_")) return;
  static const std::regex tile(R"(_t([0-9]+)x[0-9]+x[0-9]+)");
  static const std::regex sort_block(R"(_sbm([0-9]+)(?:_|$))");
  std::smatch tile_match;
  if (!std::regex_search(t.kernel_name2, tile_match, tile)) return;
  std::smatch sbm_match;
  bool const has_sbm = std::regex_search(t.kernel_name2, sbm_match, sort_block);
  auto const sort_m = std::stoll(has_sbm ? sbm_match[1].str() : tile_match[1].str());
  if (sort_m == t.block_m) return;
  out.push_back({Severity::error, table.file(), row.line, column_of(table, row, Column::block_m),
                 fmt::format("column 'block_m': {} does not match the sorting block {} of "
                             "kernelName2 '{}': stage two must read the layout stage one sorted",
                             t.block_m, sort_m, t.kernel_name2)});
}

void check_duplicate(const FmoeTable& table, const FmoeRow& row, KeySpace& keys,
                     std::vector<Diagnostic>& out) {
  // AITER's grouped lookup keeps every matching row and takes the fastest measured one, and
  // its CSV test does not check that family for duplicates: several rows per shape are legal.
  if (is_grouped(table.kind())) return;
  auto const [it, inserted] = keys.try_emplace({family(table.kind()), is_tuned(table.kind()), row.key},
                                               Place{table.file(), row.line});
  if (inserted) return;
  auto const& first = it->second;
  out.push_back({Severity::error, table.file(), row.line, 1,
                 fmt::format("duplicate key: {} and {} both define {}{}; AITER would silently "
                             "use only one of them",
                             format_location(first.file, first.line, 0),
                             format_location(table.file(), row.line, 0), row.key.describe(),
                             row.gfx_from_cu_num ? " (gfx filled from cu_num, as AITER does "
                                                   "for a table without a gfx column)"
                                                 : "")});
}

// FileError's what() already starts with "file: error: "; a Diagnostic adds its own.
std::string bare_message(const std::exception& e, const std::filesystem::path& file) {
  std::string message = e.what();
  auto const prefix = file.string() + ": error: ";
  if (message.starts_with(prefix)) message.erase(0, prefix.size());
  return message;
}

}  // namespace

std::size_t ValidationReport::error_count() const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::error; }));
}

std::size_t ValidationReport::warning_count() const { return findings.size() - error_count(); }

int ValidationReport::exit_code() const {
  bool const unreadable =
      std::any_of(files.begin(), files.end(), [](const FileSummary& f) { return !f.readable; });
  if (unreadable) return 2;
  return error_count() > 0 ? 1 : 0;
}

ValidationReport validate_files(const std::vector<std::filesystem::path>& files) {
  ValidationReport report;
  KeySpace keys;
  for (auto const& file : files) {
    FileSummary summary;
    summary.file = file;
    std::vector<Diagnostic> found;
    try {
      auto parsed = parse_fmoe_file(file);
      summary.readable = true;
      summary.kind = parsed.table.kind();
      summary.rows = parsed.data_rows;
      found = std::move(parsed.diagnostics);
      auto const& table = parsed.table;
      for (auto const& row : table.rows()) {
        check_token(table, row, found);
        // A padded short row's result columns may be shifted: not checked (see fmoe_table).
        if (row.tuned && row.missing_fields == 0) {
          check_times(table, row, found);
          check_sort_block(table, row, found);
        }
        check_duplicate(table, row, keys, found);
      }
    } catch (const InputError& e) {
      found.push_back({Severity::error, e.file(), e.line(), e.column(), e.message()});
    } catch (const FileError& e) {
      found.push_back({Severity::error, file, 0, 0, bare_message(e, file)});
    }
    std::stable_sort(found.begin(), found.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::pair(a.line, a.column) < std::pair(b.line, b.column);
    });
    for (auto const& d : found) {
      (d.severity == Severity::error ? summary.errors : summary.warnings) += 1;
    }
    report.findings.insert(report.findings.end(), found.begin(), found.end());
    report.files.push_back(std::move(summary));
  }
  return report;
}

void print_report(const ValidationReport& report, std::FILE* out) {
  std::size_t next = 0;
  for (auto const& summary : report.files) {
    std::size_t const count = summary.errors + summary.warnings;
    for (std::size_t i = 0; i < count && next < report.findings.size(); ++i, ++next) {
      fmt::print(out, "{}\n", report.findings[next].format());
    }
    if (!summary.readable) {
      fmt::print(out, "{}: unreadable: not checked further\n", summary.file.string());
    } else if (summary.errors == 0) {
      fmt::print(out, "{}: ok: {}, {}\n", summary.file.string(), plural(summary.rows, "row"),
                 plural(summary.warnings, "warning"));
    } else {
      fmt::print(out, "{}: FAILED: {}, {}, {}\n", summary.file.string(),
                 plural(summary.rows, "row"), plural(summary.errors, "error"),
                 plural(summary.warnings, "warning"));
    }
  }
  fmt::print(out, "validate: {}, {}, {}\n", plural(report.files.size(), "file"),
             plural(report.error_count(), "error"), plural(report.warning_count(), "warning"));
}

}  // namespace moetune::io
