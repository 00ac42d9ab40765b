#include "autotune/tune/protocol_run.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/failed_buckets.hpp"
#include "autotune/tune/journal.hpp"
#include "autotune/tune/journaled_row.hpp"
#include "autotune/tune/manifest.hpp"
#include "autotune/tune/markdown_summary.hpp"
#include "autotune/tune/shard_plan.hpp"
#include "autotune/tune/time_split.hpp"
#include "autotune/tune/withdrawn_rows.hpp"

namespace moetune::tune {

namespace {

std::filesystem::path journal_path(const ProtocolRun& run) {
  return run.journal.file.empty() ? run.report_dir / "journal.jsonl" : run.journal.file;
}

// Opens the journal for this run: continues a matching one (--resume), else starts a new one.
// Returns the buckets already decided, by key.
JournalWriter open_journal(const ProtocolRun& run, const JournalIdentity& identity,
                                 std::map<std::string, JournalEntry>& decided) {
  auto const file = journal_path(run);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  bool const exists = std::filesystem::exists(file);
  if (run.journal.resume && exists) {
    auto contents = read_journal(file);
    for (auto const& w : contents.warnings) fmt::print("warning: {}\n", w);
    auto const mismatches = identity_mismatches(contents.identity, identity);
    if (!mismatches.empty()) {
      // Verdicts of another device, toolchain, space, list or gate must not be mixed in.
      std::string text;
      for (auto const& m : mismatches) text += "\n  " + m;
      throw Error(fmt::format(
          "{}: cannot resume: the journal was written by a different run ({} field(s) differ):{}"
          "\nRerun without --resume to start over (the old journal is kept as {}.prev), or "
          "with the original settings to continue it.",
          file.string(), mismatches.size(), text, file.filename().string()));
    }
    for (auto& e : contents.entries) {
      auto key = e.key;
      decided.emplace(std::move(key), std::move(e));
    }
    fmt::print("resume: {} holds {} decided bucket(s); they are not measured again\n",
               file.string(), decided.size());
    return JournalWriter::resume(file, contents.valid_bytes);
  }
  if (run.journal.resume) {
    fmt::print("resume: no journal at {}: nothing to resume, starting a new one\n",
               file.string());
  } else if (exists) {
    // A fresh run never appends to another run's journal, and never destroys one either.
    auto prev = file;
    prev += ".prev";
    std::filesystem::rename(file, prev);
    fmt::print("journal: {} existed (an earlier run; --resume would continue it); kept as {}\n",
               file.string(), prev.string());
  }
  return JournalWriter::create(file, identity);
}

// What the end of a run did to the tuned table besides adding rows: journal entries that
// yielded no row though they carry or claim one, and older rows removed because their bucket
// no longer qualifies. Empty until the rows are written.
struct TableChanges {
  std::vector<std::string> rejected_entries;
  std::vector<WithdrawnRow> withdrawn;
};

// The decided buckets in plan order, for the report and summary (pointers: a run over several
// devices rewrites both after every bucket and must not copy every report each time).
std::vector<const JournalEntry*> in_order(const std::vector<JournalEntry>& entries) {
  std::vector<const JournalEntry*> out;
  out.reserve(entries.size());
  for (auto const& e : entries) out.push_back(&e);
  return out;
}
std::vector<const JournalEntry*> in_order(const std::vector<std::optional<JournalEntry>>& slots) {
  std::vector<const JournalEntry*> out;
  for (auto const& e : slots)
    if (e) out.push_back(&*e);
  return out;
}

// report.json from journaled bucket JSON: the same document write_tune_report writes, with
// the buckets in plan order whether measured now or taken from the journal.
void write_report(const ProtocolRun& run, std::span<const JournalEntry* const> entries,
                  std::size_t resumed, const TableChanges& changes = {}) {
  auto report = tune_report_json({}, run.protocol, run.provenance);
  for (auto const* e : entries) report["buckets"].push_back(e->report);
  report["journal"] = {{"file", journal_path(run).string()},
                       {"buckets_from_journal", resumed},
                       {"entries_without_row", changes.rejected_entries}};
  report["withdrawn_rows"] = to_json(changes.withdrawn);
  report["compile"] = to_json(run.compile);
  write_file_atomically(run.report_dir / "report.json", report.dump(2) + "\n");
}

// summary.md likewise: the preamble and table head of an empty summary, then one line per
// bucket (each entry carries its own line), then a line for every bucket that failed, then
// any withdrawn rows.
void write_summary(const ProtocolRun& run, std::span<const JournalEntry* const> entries,
                   const TableChanges& changes = {}) {
  auto text = markdown_summary({}, run.protocol, run.provenance);
  std::vector<FailedBucket> failed;
  for (auto const* e : entries) {
    text += e->summary_md + "\n";
    if (auto f = failed_bucket(e->report)) failed.push_back(std::move(*f));
  }
  text += failed_buckets_markdown(failed);
  text += withdrawn_rows_markdown(changes.withdrawn);
  std::vector<nlohmann::json> reports;
  for (auto const* e : entries) reports.push_back(e->report);
  text += time_split_markdown(run.compile, reports);
  write_file_atomically(run.report_dir / "summary.md", text);
}

ProtocolTotals count_outcomes(const std::vector<JournalEntry>& entries) {
  ProtocolTotals totals;
  totals.buckets = entries.size();
  for (auto const& e : entries) {
    totals.qualified += e.row ? 1 : 0;
    if (auto f = failed_bucket(e.report)) {
      ++(f->status == BucketStatus::setup_failed ? totals.setup_failed
                                                       : totals.baseline_failed);
    }
  }
  return totals;
}

// The decided buckets' rows into run.output: a row only from a consistent qualified decision
// (journaled_row), and the older row of every other decided bucket withdrawn. A bucket
// whose baseline or set-up failed decided nothing: an older row for it is kept (and the
// summary names the failure), since nothing measured here speaks against it.
struct WrittenRows {
  std::size_t written = 0;
  std::size_t replaced = 0;
  TableChanges changes;
};

WrittenRows write_rows(const TunePlan& plan, const ProtocolRun& run,
                       const std::vector<JournalEntry>& entries) {
  std::vector<io::FmoeRow> rows;
  std::vector<RowWithdrawal> withdrawals;
  WrittenRows out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto const& bucket_key = plan.buckets[i].key;
    if (failed_bucket(entries[i].report)) continue;
    auto checked = journaled_row(entries[i], bucket_key, run.rows, journal_path(run));
    if (!checked.warning.empty()) {
      fmt::print("warning: {}\n", checked.warning);
      out.changes.rejected_entries.push_back(checked.warning);
    }
    if (checked.row) {
      rows.push_back(std::move(*checked.row));
    } else {
      withdrawals.push_back({tuned_row_key(bucket_key, run.rows),
                             checked.warning.empty() ? entries[i].summary : checked.warning});
    }
  }
  auto written = write_tuned_rows(run.output, rows, withdrawals);
  fmt::print("{}", withdrawn_rows_console(written.withdrawn));
  out.written = rows.size();
  out.replaced = written.replaced;
  out.changes.withdrawn = std::move(written.withdrawn);
  return out;
}

// Before the first bucket: the output folders, and the journal (continued or new) with the
// buckets it already decided.
JournalWriter start_run(const ProtocolRun& run, std::map<std::string, JournalEntry>& decided) {
  std::filesystem::create_directories(run.report_dir);
  if (run.output.has_parent_path()) std::filesystem::create_directories(run.output.parent_path());
  auto const identity = journal_identity(run.provenance, run.protocol, run.journal.identity);
  return open_journal(run, identity, decided);
}

// A bucket whose set-up failed is not decided: the journal must not hold it, so that --resume
// measures it again.
void print_not_journaled(const measure::BucketPlan& bucket) {
  fmt::print("  line {}: bucket token={} not journaled (its set-up failed); the run goes "
             "on, and `tune --resume` retries it\n",
             bucket.line, bucket.key.token);
}

// After every bucket is decided: the rows, the last word of the report and summary, the
// console's account and the totals.
ProtocolTotals finish_run(const TunePlan& plan, const ProtocolRun& run,
                          const std::vector<JournalEntry>& entries, std::size_t resumed) {
  auto const written = write_rows(plan, run, entries);
  // The last word of the report and summary: what the table gained and lost.
  write_report(run, in_order(entries), resumed, written.changes);
  write_summary(run, in_order(entries), written.changes);
  auto const totals = count_outcomes(entries);
  // write_tuned_rows counts the rows it *replaced* (same key already in the file) apart from
  // the rows written: report both, and name the file whenever a row went into or out of it.
  bool const touched = written.written > 0 || !written.changes.withdrawn.empty();
  fmt::print("\n{} of {} buckets qualified; {} rows written to {} ({} replaced, {} withdrawn); "
             "report {}{}{}\n",
             written.written, plan.buckets.size(), written.written,
             touched ? run.output.string() : "(nothing)", written.replaced,
             written.changes.withdrawn.size(), (run.report_dir / "report.json").string(),
             run.provenance.sampler == "replay" ? " (replayed samples, not a measurement)" : "",
             resumed ? fmt::format("; {} bucket(s) taken from the journal", resumed) : "");
  if (totals.baseline_failed > 0) {
    fmt::print("{} bucket(s) not tuned because their baseline failed (see summary.md); exit "
               "code {}\n",
               totals.baseline_failed, kExitBaselineFailed);
  }
  if (totals.setup_failed > 0) {
    fmt::print("{} bucket(s) not tuned because their set-up failed (not journaled: rerun with "
               "--resume to measure them); exit code {}\n",
               totals.setup_failed, kExitSetupFailed);
  }
  return totals;
}

}  // namespace

TuneHooks bucket_hooks(const std::filesystem::path& report_dir, std::int64_t line,
                       std::optional<std::string> decision_code_sha256) {
  TuneHooks hooks;
  hooks.on_manifest = [report_dir, line,
                       code = std::move(decision_code_sha256)](const Manifest& manifest) {
    // Declared, and on disk, before the first confirmation sample.
    auto declared = to_json(manifest);
    // The code that will judge the confirmation is part of what was declared.
    if (code) declared["decision_code_sha256"] = *code;
    write_file_atomically(report_dir / fmt::format("manifest_line{}.json", line),
                          declared.dump(2) + "\n");
  };
  hooks.log = [](std::string_view text) { fmt::print("  {}\n", text); };
  return hooks;
}

int ProtocolTotals::exit_code() const {
  if (setup_failed > 0) return kExitSetupFailed;
  if (baseline_failed > 0) return kExitBaselineFailed;
  return 0;
}

namespace {

// The buckets one after another on one sampler; `device` (if not empty) named in each
// measured bucket's report.
ProtocolTotals run_sequential(const TunePlan& plan, measure::Sampler& sampler, const ProtocolRun& run,
                              const std::string& device) {
  std::map<std::string, JournalEntry> decided;
  auto journal = start_run(run, decided);

  std::vector<JournalEntry> entries;  // one per bucket, in plan order
  std::size_t resumed = 0;
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    auto const& bucket = plan.buckets[i];
    fmt::print("\n[{}/{}] bucket token={} at M={} (line {})\n", i + 1, plan.buckets.size(),
               bucket.key.token, bucket.M, bucket.line);
    if (auto it = decided.find(bucket.key.describe()); it != decided.end()) {
      auto& e = it->second;
      std::string const verdict = e.qualified ? "qualified" : "not qualified";
      fmt::print("  line {}: decided in the journal (journal line {}): {}{}\n", bucket.line,
                 e.journal_line, verdict, e.summary == verdict ? "" : ": " + e.summary);
      entries.push_back(std::move(e));
      decided.erase(it);  // a key is emitted once, even if the plan named it twice
      ++resumed;
    } else {
      auto const result =
          tune_bucket(bucket, sampler, run.protocol,
                      bucket_hooks(run.report_dir, bucket.line, run.provenance.decision_code_sha256));
      fmt::print("  => {}\n", result.summary);
      entries.push_back(journal_entry(result, run.rows, run.protocol, run.provenance));
      if (!device.empty()) entries.back().report["device"] = device;
      if (result.setup_failure) {
        print_not_journaled(bucket);
      } else {
        // Journaled (and on disk) before anything else: from here a kill loses nothing.
        journal.record(entries.back());
      }
    }
    // Reports are rewritten after every bucket, so an interrupted run keeps what it decided.
    write_report(run, in_order(entries), resumed);
    write_summary(run, in_order(entries));
  }
  return finish_run(plan, run, entries, resumed);
}

}  // namespace

ProtocolTotals run_protocol(const TunePlan& plan, measure::Sampler& sampler,
                            const ProtocolRun& run) {
  return run_sequential(plan, sampler, run, "");
}

ProtocolTotals run_protocol(const TunePlan& plan, const std::vector<DeviceWorker>& workers,
                            const ProtocolRun& run) {
  if (workers.empty()) throw Error("run_protocol: no measuring worker");
  if (workers.size() == 1) return run_sequential(plan, *workers.front().sampler, run, workers.front().device);
  std::map<std::string, JournalEntry> decided;
  auto journal = start_run(run, decided);

  // Slots in plan order; the journal's buckets first (a key is taken once, as above).
  std::vector<std::optional<JournalEntry>> slots(plan.buckets.size());
  std::vector<std::size_t> todo;
  std::size_t resumed = 0;
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    if (auto it = decided.find(plan.buckets[i].key.describe()); it != decided.end()) {
      fmt::print("line {}: bucket token={} decided in the journal (journal line {}): {}\n",
                 plan.buckets[i].line, plan.buckets[i].key.token, it->second.journal_line,
                 it->second.summary);
      slots[i] = std::move(it->second);
      decided.erase(it);
      ++resumed;
    } else {
      todo.push_back(i);
    }
  }
  // Largest first, so the last bucket to start is a short one (ties: list order).
  std::stable_sort(todo.begin(), todo.end(), [&](std::size_t a, std::size_t b) {
    return bucket_cost(plan.buckets[a]) > bucket_cost(plan.buckets[b]);
  });
  fmt::print("{} bucket(s) to measure on {} devices, largest first\n", todo.size(), workers.size());

  std::mutex lock;  // the slots, the journal, the reports and the console
  run_on_workers(todo, workers.size(), [&](std::size_t i, std::size_t w) {
    auto const& worker = workers[w];
    auto const& bucket = plan.buckets[i];
    // A bucket's progress lines are printed together once it is decided, under its device.
    std::string log;
    auto hooks = bucket_hooks(run.report_dir, bucket.line, run.provenance.decision_code_sha256);
    hooks.log = [&log](std::string_view text) { log += fmt::format("  {}\n", text); };
    auto const result = tune_bucket(bucket, *worker.sampler, run.protocol, hooks);
    auto entry = journal_entry(result, run.rows, run.protocol, run.provenance);
    entry.report["device"] = worker.device;
    std::lock_guard<std::mutex> guard(lock);
    fmt::print("\n[{}] bucket token={} at M={} (line {})\n{}  => {}\n", worker.device,
               bucket.key.token, bucket.M, bucket.line, log, result.summary);
    slots[i] = std::move(entry);
    if (result.setup_failure) {
      print_not_journaled(bucket);
    } else {
      journal.record(*slots[i]);
    }
    auto const so_far = in_order(slots);
    write_report(run, so_far, resumed);
    write_summary(run, so_far);
  });
  std::vector<JournalEntry> entries;
  for (auto& e : slots) entries.push_back(std::move(*e));
  return finish_run(plan, run, entries, resumed);
}

}  // namespace moetune::tune
