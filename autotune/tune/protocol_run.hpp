#pragma once
// The qualification protocol over every planned bucket of a run (`moe-tune tune`), on any
// Sampler: the GPU (GpuSampler) for a measurement, a ReplaySampler for a replayed run
// (`--replay`). Both paths go through this one loop, so what CI replays is exactly what a GPU
// run does. `moe-tune requalify` shares its per-bucket part (bucket_hooks).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "autotune/measure/sampler.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/device_workers.hpp"
#include "autotune/tune/protocol_options.hpp"
#include "autotune/tune/tune_plan.hpp"
#include "autotune/tune/tune_report.hpp"
#include "autotune/tune/tuned_rows.hpp"

namespace moetune::tune {

// Where decided buckets are journaled and whether an earlier journal is continued.
struct JournalSettings {
  std::filesystem::path file;  // empty: <report_dir>/journal.jsonl
  bool resume = false;         // continue the journal: decided buckets are not measured again
  // Identity fields the caller adds to the provenance's (input list and its SHA-256, routing,
  // replay model digest, ...): a resumed run must match all of them.
  std::map<std::string, std::string> identity;
};

// The run's compile step, done once before any bucket (cmd_tune): it heads the time split.
struct CompileStep {
  std::size_t units = 0;       // distinct kernel units
  std::size_t from_cache = 0;  // of those, taken from the code cache
  std::size_t failed = 0;
  double seconds = 0;
};

struct ProtocolRun {
  std::optional<CompileStep> compile;  // absent when the caller compiled nothing
  std::filesystem::path output;      // tuned CSV: qualified rows only
  std::filesystem::path report_dir;  // report.json, summary.md, manifest_line<N>.json
  ProtocolOptions protocol;
  Provenance provenance;       // its `sampler` says whether this is a measurement
  RowContext rows;             // gfx and cu_num written into every tuned row
  JournalSettings journal;
};

// `tune`'s exit codes for buckets it could not tune (docs/tuning.md, `tune --help`); they
// come after everything else was measured and written.
inline constexpr int kExitBaselineFailed = 4;  // a bucket's baseline failed (journaled)
inline constexpr int kExitSetupFailed = 5;     // a bucket's set-up failed: --resume retries it

// How the buckets of a run ended (this run's and those taken from the journal).
struct ProtocolTotals {
  std::size_t buckets = 0;
  std::size_t qualified = 0;
  std::size_t baseline_failed = 0;
  std::size_t setup_failed = 0;
  // 0 when every bucket was decided with a working baseline; else kExitSetupFailed when any
  // set-up failed (the one a rerun can fix), else kExitBaselineFailed.
  [[nodiscard]] int exit_code() const;
};

// Runs tune_bucket on every bucket of the plan, in order, writing each bucket's manifest
// before its confirmation, journaling each decided bucket as soon as it is decided, and the
// report and summary after every bucket; then the rows. A bucket whose set-up failed is
// reported but not journaled (not decided), and the run goes on. With journal.resume, buckets
// the journal already holds are taken from it, not measured; a journal of another run
// (identity mismatch) is refused with every differing field named. Without resume an existing
// journal is kept as journal.jsonl.prev and a new one started.
ProtocolTotals run_protocol(const TunePlan& plan, measure::Sampler& sampler,
                            const ProtocolRun& run);

// run_protocol over several workers at once: the undecided buckets go largest first
// (bucket_cost, ties in list order) to whichever worker is free, so each bucket is measured
// wholly by one worker and no two workers share one. Journal, report and summary are written
// under one lock as each bucket is decided; they list the buckets in plan order, each bucket's
// report naming its device. With one worker this is run_protocol above.
ProtocolTotals run_protocol(const TunePlan& plan, const std::vector<DeviceWorker>& workers,
                            const ProtocolRun& run);

// The hooks of one bucket of a run: its manifest declared, on disk, before the first
// confirmation sample (report_dir/manifest_line<line>.json, naming the decision code that
// will judge the confirmation when decision_code_sha256 is given), and the protocol's log
// lines on stdout. run_protocol's buckets and `moe-tune requalify`'s rows get these.
[[nodiscard]] TuneHooks bucket_hooks(const std::filesystem::path& report_dir, std::int64_t line,
                                     std::optional<std::string> decision_code_sha256);

}  // namespace moetune::tune
