#include "autotune/tune/shard_merge.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/tune/failed_buckets.hpp"
#include "autotune/tune/journal.hpp"
#include "autotune/tune/shard_plan.hpp"
#include "autotune/tune/time_split.hpp"
#include "autotune/tune/tuned_rows.hpp"

namespace moetune::tune {
namespace {

struct Shard {
  std::filesystem::path dir;
  ShardSpec spec;
  std::vector<std::int64_t> lines;  // the list lines it owns (its journal header says)
  JournalContents journal;
};

std::vector<std::int64_t> parse_lines(const std::string& text, const std::filesystem::path& file) {
  std::vector<std::int64_t> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto const comma = text.find(',', start);
    auto const item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    try {
      lines.push_back(std::stoll(item));
    } catch (const std::exception&) {
      throw Error(fmt::format("{}: '{}' in {} is not a list line", file.string(), item, kShardLinesField));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return lines;
}

Shard read_shard(const std::filesystem::path& dir) {
  auto const file = dir / "journal.jsonl";
  if (!std::filesystem::exists(file))
    throw Error(fmt::format("{}: no journal (a shard's report directory holds journal.jsonl)", dir.string()));
  Shard s{dir, {}, {}, read_journal(file)};
  auto const shard = s.journal.identity.find(std::string(kShardField));
  auto const lines = s.journal.identity.find(std::string(kShardLinesField));
  if (shard == s.journal.identity.end() || lines == s.journal.identity.end())
    throw Error(fmt::format("{}: not a shard's journal (no '{}' field: the run was not started with --shard)",
                            file.string(), kShardField));
  s.spec = parse_shard(shard->second, [](const char*) { return std::nullopt; });
  s.lines = parse_lines(lines->second, file);
  s.journal.identity.erase(shard);
  s.journal.identity.erase(std::string(kShardLinesField));
  return s;
}

// The preamble of a shard's summary.md: everything before its first bucket line.
std::string summary_preamble(const Shard& s) {
  auto const text = read_file(s.dir / "summary.md");
  for (auto const& e : s.journal.entries) {
    if (auto const at = text.find(e.summary_md + "\n"); at != std::string::npos) return text.substr(0, at);
  }
  throw Error(fmt::format("{}: none of the journal's bucket lines is in summary.md", (s.dir / "summary.md").string()));
}

}  // namespace

MergeShardsResult merge_shards(const MergeShardsOptions& options) {
  if (options.shard_report_dirs.empty()) throw Error("merge-shards: no shard report directories given");
  if (std::filesystem::exists(options.output))
    throw Error(fmt::format("{}: exists; merge-shards writes a new table (merge it into another with "
                            "`moe-tune merge`)", options.output.string()));
  std::vector<Shard> shards;
  for (auto const& dir : options.shard_report_dirs) shards.push_back(read_shard(dir));

  // One run: the same identity but for the shard fields, one N, no shard twice.
  auto const& first = shards.front();
  std::map<int, std::filesystem::path> seen;
  for (auto const& s : shards) {
    auto const mismatches = identity_mismatches(first.journal.identity, s.journal.identity);
    if (!mismatches.empty()) {
      std::string text;
      for (auto const& m : mismatches) text += "\n  " + m;
      throw Error(fmt::format("{} and {} are shards of different runs ({} field(s) differ, "
                              "'the journal' being the first):{}",
                              first.dir.string(), s.dir.string(), mismatches.size(), text));
    }
    if (s.spec.count != first.spec.count)
      throw Error(fmt::format("{} is shard {} but {} is shard {}: different shard counts",
                              first.dir.string(), first.spec.label(), s.dir.string(), s.spec.label()));
    if (auto const [it, fresh] = seen.emplace(s.spec.index, s.dir); !fresh)
      throw Error(fmt::format("shard {} given twice: {} and {}", s.spec.label(), it->second.string(), s.dir.string()));
  }

  // Every bucket decided once; each shard's own buckets all decided (else say which).
  MergeShardsResult result;
  result.shards = shards.size();
  result.count = static_cast<std::size_t>(first.spec.count);
  std::map<std::int64_t, std::pair<const JournalEntry*, const Shard*>> by_line;
  std::map<std::string, const Shard*> by_key;
  for (auto const& s : shards) {
    std::set<std::int64_t> const own(s.lines.begin(), s.lines.end());
    std::set<std::int64_t> decided;
    for (auto const& e : s.journal.entries) {
      if (!own.contains(e.line))
        throw Error(fmt::format("{}: line {} is decided in shard {}'s journal but belongs to another shard",
                                s.dir.string(), e.line, s.spec.label()));
      if (auto const [it, fresh] = by_key.emplace(e.key, &s); !fresh)
        throw Error(fmt::format("{} is decided by shard {} ({}) and shard {} ({})", e.key,
                                it->second->spec.label(), it->second->dir.string(), s.spec.label(), s.dir.string()));
      by_line.emplace(e.line, std::make_pair(&e, &s));
      decided.insert(e.line);
    }
    std::string missing;
    for (auto const l : s.lines)
      if (!decided.contains(l)) missing += (missing.empty() ? "" : ", ") + std::to_string(l);
    if (!missing.empty())
      result.missing.push_back(fmt::format("shard {} ({}): line(s) {} not decided; continue it with "
                                           "`moe-tune tune --shard {} --resume` and its other options",
                                           s.spec.label(), s.dir.string(), missing, s.spec.label()));
  }
  for (int k = 0; k < first.spec.count; ++k)
    if (!seen.contains(k))
      result.missing.push_back(fmt::format("shard {}/{}: not given", k + 1, first.spec.count));
  if (!result.missing.empty() && !options.partial) return result;  // nothing written

  // The unsharded run's journal, report, summary and table, buckets in list order.
  std::filesystem::create_directories(options.report_dir);
  auto journal = JournalWriter::create(options.report_dir / "journal.jsonl", first.journal.identity);
  std::vector<io::FmoeRow> rows;
  std::vector<nlohmann::json> reports;
  std::vector<FailedBucket> failed;
  std::string lines_md;
  for (auto const& [line, entry_shard] : by_line) {
    auto const& e = *entry_shard.first;
    journal.record(e);
    reports.push_back(e.report);
    lines_md += e.summary_md + "\n";
    if (auto f = failed_bucket(e.report)) failed.push_back(std::move(*f));
    if (e.qualified && e.row) rows.push_back(*e.row);
    ++result.buckets;
  }
  result.qualified = rows.size();

  // report.json: the first shard's (provenance and protocol are one run's), all buckets.
  auto report = nlohmann::json::parse(read_file(first.dir / "report.json"));
  report["buckets"] = reports;
  report["journal"] = {{"file", (options.report_dir / "journal.jsonl").string()},
                       {"buckets_from_journal", result.buckets},
                       {"entries_without_row", nlohmann::json::array()}};
  report["withdrawn_rows"] = nlohmann::json::array();
  report["compile"] = nullptr;  // each shard compiled on its own machine: see "shards"
  nlohmann::json shard_list = nlohmann::json::array();
  for (auto const& s : shards) {
    auto const shard_report = nlohmann::json::parse(read_file(s.dir / "report.json"));
    shard_list.push_back({{"shard", s.spec.label()},
                          {"report_dir", s.dir.string()},
                          {"lines", s.lines},
                          {"decided", s.journal.entries.size()},
                          {"compile", shard_report.value("compile", nlohmann::json())},
                          {"provenance_command", shard_report.contains("provenance")
                                                     ? shard_report["provenance"].value("command", "")
                                                     : ""}});
  }
  report["shards"] = {{"count", first.spec.count}, {"merged", shard_list}, {"missing", result.missing}};
  write_file_atomically(options.report_dir / "report.json", report.dump(2) + "\n");

  // summary.md: one run's preamble and table, then the shards.
  std::string text = summary_preamble(*std::find_if(shards.begin(), shards.end(), [](const Shard& s) {
    return !s.journal.entries.empty();
  }));
  text += lines_md;
  text += failed_buckets_markdown(failed);
  text += time_split_markdown(std::nullopt, reports);
  text += fmt::format("\n## Shards\n\nMerged from {} of {} shards (`tune --shard K/N`, docs/scale-out.md); "
                      "each compiled on its own machine.\n\n| shard | report | list lines | decided |\n|---|---|---|---:|\n",
                      shards.size(), first.spec.count);
  for (auto const& s : shards) {
    std::string lines;
    for (auto const l : s.lines) lines += (lines.empty() ? "" : ", ") + std::to_string(l);
    text += fmt::format("| {} | `{}` | {} | {} of {} |\n", s.spec.label(), s.dir.string(), lines,
                        s.journal.entries.size(), s.lines.size());
  }
  for (auto const& m : result.missing) text += fmt::format("\nNot complete: {}.\n", m);
  write_file_atomically(options.report_dir / "summary.md", text);

  if (!rows.empty()) (void)write_tuned_rows(options.output, rows);
  result.written = true;
  return result;
}

}  // namespace moetune::tune
