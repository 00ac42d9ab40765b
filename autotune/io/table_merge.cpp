#include "autotune/io/table_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <system_error>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/io/csv_table.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/fmoe_writer.hpp"
#include "autotune/io/validate.hpp"

namespace moetune::io {
namespace {

struct Place {
  std::filesystem::path file;
  std::int64_t line = 0;
};

// "file:line", the form both places of a collision are named in.
std::string where(const std::filesystem::path& file, std::int64_t line) {
  return fmt::format("{}:{}", file.string(), line);
}

std::string join_cells(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + cells[i];
  return line;
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

// A CSV in an AITER config folder is often not an fMoE table at all (GEMM tables live beside
// them); only its header tells, and it is cheaper and safer to look before parsing rows.
bool looks_like_fmoe(std::string_view text) {
  auto header = text.substr(0, text.find('\n'));
  if (header.ends_with('\r')) header.remove_suffix(1);
  for (auto const& name : split_fields(header)) {
    if (name == "token" || name == "model_dim" || name == "inter_dim") return true;
  }
  return false;
}

std::vector<std::filesystem::path> csv_files_in(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw FileError(dir, "read the sibling directory", "it is not a directory");
  }
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".csv") files.push_back(it->path());
  }
  if (ec) throw FileError(dir, "list the sibling directory", ec.message());
  // Sorted so that a collision is always reported against the same sibling.
  std::sort(files.begin(), files.end());
  return files;
}

void check_target(const FmoeParseResult& parsed, MergePlan& plan) {
  auto const& table = parsed.table;
  if (!is_tuned(table.kind())) {
    plan.findings.push_back(
        {Severity::error, plan.target, 1, 1,
         fmt::format("the target is an {} file, not a tuned table: merge only adds tuned rows",
                     to_string(table.kind()))});
  } else if (is_grouped(table.kind())) {
    plan.findings.push_back(
        {Severity::error, plan.target, 1, 1,
         "the target is a tuned grouped-MoE table: moe-tune validates that family but does "
         "not write its rows (their tile, warp and buffer columns are AITER's FlyDSL knobs)"});
  }
  // The reader leaves rows with errors out of the table; writing it back would drop them.
  for (auto const& d : parsed.diagnostics) {
    if (d.severity == Severity::error) plan.findings.push_back(d);
  }
  std::map<FmoeKey, std::int64_t> seen;
  for (auto const& row : table.rows()) {
    auto const [it, inserted] = seen.try_emplace(row.key, row.line);
    if (!inserted) {
      plan.findings.push_back(
          {Severity::error, plan.target, row.line, 1,
           fmt::format("duplicate key: {} and {} both define {}; a merge cannot tell which row "
                       "to replace (fix the target first)",
                       where(plan.target, it->second), where(plan.target, row.line),
                       row.key.describe())});
    }
  }
}

void check_incoming(const FmoeParseResult& parsed, FmoeFileKind target_kind, MergePlan& plan) {
  auto const report = validate_files({plan.incoming});
  plan.findings.insert(plan.findings.end(), report.findings.begin(), report.findings.end());
  auto const& table = parsed.table;
  if (table.kind() != target_kind) {
    plan.findings.push_back(
        {Severity::error, plan.incoming, 1, 1,
         fmt::format("the file is of kind '{}' but the target {} is of kind '{}'",
                     to_string(table.kind()), plan.target.string(), to_string(target_kind))});
  }
  for (auto const& row : table.rows()) {
    if (row.missing_fields > 0) {
      plan.findings.push_back(
          {Severity::error, plan.incoming, row.line, 0,
           "a short (padded) row cannot be merged: its result columns may sit one column off, "
           "so its values cannot be trusted"});
    }
  }
}

// A sibling's own problems are reported (as warnings) but do not refuse the merge: AITER
// reads each table on its own, so a bad row elsewhere does not change what this merge
// writes. Only a collision of one of the new rows with a sibling's key refuses it.
void check_siblings(const std::filesystem::path& dir, const FmoeTable& incoming,
                    MergePlan& plan) {
  using SpaceKey = std::pair<FmoeFamily, FmoeKey>;
  std::map<SpaceKey, Place> keys;
  auto as_warning = [&](Diagnostic d) {
    d.severity = Severity::warning;
    d.message = fmt::format("in a sibling table (does not block this merge): {}", d.message);
    plan.findings.push_back(std::move(d));
  };
  for (auto const& file : csv_files_in(dir)) {
    if (same_file(file, plan.target) || same_file(file, plan.incoming)) continue;
    std::string const text = read_file(file);
    if (!looks_like_fmoe(text)) {
      plan.siblings_skipped.push_back(file);
      continue;
    }
    std::optional<FmoeParseResult> parsed;
    try {
      parsed = parse_fmoe_csv(parse_csv(text, file, fmoe_csv_options()));
    } catch (const InputError& e) {
      as_warning({Severity::warning, e.file(), e.line(), e.column(),
                  fmt::format("{} (its keys could not be compared)", e.message())});
      plan.siblings_skipped.push_back(file);
      continue;
    }
    if (!is_tuned(parsed->table.kind())) {  // untuned lists are a separate key space
      plan.siblings_skipped.push_back(file);
      continue;
    }
    plan.siblings_checked.push_back(file);
    for (auto const& d : parsed->diagnostics) {
      if (d.severity == Severity::error) as_warning(d);
    }
    auto const space = family(parsed->table.kind());
    for (auto const& row : parsed->table.rows()) {
      keys.try_emplace({space, row.key}, Place{file, row.line});
    }
  }
  auto const space = family(incoming.kind());
  for (auto const& row : incoming.rows()) {
    auto const it = keys.find({space, row.key});
    if (it == keys.end()) continue;
    plan.findings.push_back(
        {Severity::error, plan.incoming, row.line, 1,
         fmt::format("key collision: {} and {} both define {}; AITER loads every tuned table "
                     "into one lookup and would silently use only one of them",
                     where(plan.incoming, row.line), where(it->second.file, it->second.line),
                     row.key.describe())});
  }
}

// Parses the merged text again: the plan is accepted only if the result is a table the reader
// (and so `validate` and AITER) accepts. Errors are traced back to the incoming row.
void check_merged(const std::string& text, const std::map<std::int64_t, std::int64_t>& source_at,
                  MergePlan& plan) {
  try {
    auto const parsed = parse_fmoe_csv(parse_csv(text, plan.target, fmoe_csv_options()));
    for (auto const& d : parsed.diagnostics) {
      if (d.severity != Severity::error) continue;
      auto const it = source_at.find(d.line);
      std::int64_t const source = it == source_at.end() ? 0 : it->second;
      plan.findings.push_back(
          {Severity::error, plan.incoming, source, 0,
           fmt::format("the merged table would be invalid at {}: {}",
                       format_location(d.file, d.line, d.column), d.message)});
    }
  } catch (const InputError& e) {
    plan.findings.push_back({Severity::error, plan.target, e.line(), e.column(),
                             fmt::format("the merged table would be unreadable: {}",
                                         e.message())});
  }
}

}  // namespace

std::size_t MergePlan::error_count() const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::error; }));
}

std::size_t MergePlan::count(MergeChange::Kind kind) const {
  return static_cast<std::size_t>(std::count_if(
      changes.begin(), changes.end(), [&](const MergeChange& c) { return c.kind == kind; }));
}

MergePlan plan_merge(const std::filesystem::path& target, const std::filesystem::path& incoming,
                     const std::optional<std::filesystem::path>& siblings_dir) {
  MergePlan plan;
  plan.target = target;
  plan.incoming = incoming;
  plan.before = read_file(target);
  plan.after = plan.before;
  auto target_parsed = parse_fmoe_csv(parse_csv(plan.before, target, fmoe_csv_options()));
  auto const incoming_parsed = parse_fmoe_file(incoming);

  check_target(target_parsed, plan);
  check_incoming(incoming_parsed, target_parsed.table.kind(), plan);
  if (siblings_dir) check_siblings(*siblings_dir, incoming_parsed.table, plan);
  if (!plan.ok()) return plan;

  FmoeTable table = std::move(target_parsed.table);
  std::vector<std::string> old_raw;
  for (auto const& row : table.rows()) old_raw.push_back(row.raw);
  // source_of[i]: the incoming line that row i of the merged table comes from (0: untouched).
  std::vector<std::int64_t> source_of(old_raw.size(), 0);
  for (auto const& row : incoming_parsed.table.rows()) {
    try {
      (void)format_row_cells(row, table.column_names(), incoming);
    } catch (const InputError& e) {
      plan.findings.push_back({Severity::error, incoming, row.line, 0, e.message()});
      continue;
    }
    auto const& rows = table.rows();
    auto const at = static_cast<std::size_t>(
        std::find_if(rows.begin(), rows.end(), [&](const FmoeRow& r) { return r.key == row.key; }) -
        rows.begin());
    table.upsert(row);
    if (at < source_of.size()) {
      source_of[at] = row.line;
    } else {
      source_of.push_back(row.line);
    }
  }
  if (!plan.ok()) return plan;

  // Row i's line in the merged text: after the header and every row and empty line above it.
  std::vector<std::int64_t> line_of(table.rows().size());
  std::map<std::int64_t, std::int64_t> source_at;  // merged line -> incoming line
  for (std::size_t i = 0, line = 1; i < table.rows().size(); ++i) {
    line += 1 + static_cast<std::size_t>(table.rows()[i].blank_lines_before);
    line_of[i] = static_cast<std::int64_t>(line);
    if (i < source_of.size() && source_of[i] != 0) source_at[line_of[i]] = source_of[i];
  }
  std::string merged = render_fmoe_table(table);
  check_merged(merged, source_at, plan);
  if (!plan.ok()) return plan;
  plan.after = std::move(merged);

  for (std::size_t i = 0; i < source_of.size(); ++i) {
    if (source_of[i] == 0) continue;
    MergeChange change;
    change.source_line = source_of[i];
    change.target_line = line_of[i];
    if (i >= old_raw.size()) {
      change.kind = MergeChange::Kind::appended;
    } else {
      auto const& row = table.rows()[i];
      bool const same =
          old_raw[i] == join_cells(format_row_cells(row, table.column_names(), incoming));
      change.kind = same ? MergeChange::Kind::unchanged : MergeChange::Kind::replaced;
    }
    plan.changes.push_back(change);
  }
  std::sort(plan.changes.begin(), plan.changes.end(),
            [](const MergeChange& a, const MergeChange& b) { return a.target_line < b.target_line; });
  return plan;
}

void apply_merge(const MergePlan& plan) {
  if (!plan.ok()) {
    throw Error(fmt::format("{}: internal error: a refused merge must not be written",
                            plan.target.string()));
  }
  if (plan.after == plan.before) return;  // nothing changes: leave the file (and its mtime)
  write_file_atomically(plan.target, plan.after);
}

std::string positional_diff(std::string_view before, std::string_view after,
                            std::string_view label_before, std::string_view label_after) {
  auto lines = [](std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start < text.size()) {
      auto const end = text.find('\n', start);
      if (end == std::string_view::npos) {
        out.push_back(text.substr(start));
        break;
      }
      out.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  };
  auto const a = lines(before);
  auto const b = lines(after);
  std::string out;
  auto hunk = [&](std::size_t a_start, std::size_t a_count, std::size_t b_start,
                  std::size_t b_count) {
    // Unified convention: an empty range names the line before it.
    out += fmt::format("@@ -{},{} +{},{} @@\n", a_count ? a_start + 1 : a_start, a_count,
                       b_count ? b_start + 1 : b_start, b_count);
    for (std::size_t i = 0; i < a_count; ++i) out += fmt::format("-{}\n", a[a_start + i]);
    for (std::size_t i = 0; i < b_count; ++i) out += fmt::format("+{}\n", b[b_start + i]);
  };
  std::size_t const common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common;) {
    if (a[i] == b[i]) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < common && a[j] != b[j]) ++j;
    hunk(i, j - i, i, j - i);
    i = j;
  }
  if (a.size() != b.size()) hunk(common, a.size() - common, common, b.size() - common);
  if (out.empty()) return out;
  return fmt::format("--- {}\n+++ {}\n", label_before, label_after) + out;
}

}  // namespace moetune::io
