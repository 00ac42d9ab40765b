#include "apps/moe-tune/tune_protocol.hpp"

#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/manifest.hpp"
#include "autotune/tune/markdown_summary.hpp"

namespace moetune::app {

std::size_t run_protocol(const tune::TunePlan& plan, tune::Sampler& sampler,
                         const ProtocolRun& run) {
  std::filesystem::create_directories(run.report_dir);
  if (run.output.has_parent_path()) std::filesystem::create_directories(run.output.parent_path());

  std::vector<tune::BucketResult> results;
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    auto const& bucket = plan.buckets[i];
    fmt::print("\n[{}/{}] bucket token={} at M={} (line {})\n", i + 1, plan.buckets.size(),
               bucket.key.token, bucket.M, bucket.line);
    tune::TuneHooks hooks;
    hooks.on_manifest = [&](const tune::Manifest& manifest) {
      // Declared, and on disk, before the first confirmation sample.
      write_file_atomically(run.report_dir / fmt::format("manifest_line{}.json", bucket.line),
                            tune::to_json(manifest).dump(2) + "\n");
    };
    hooks.log = [](std::string_view line) { fmt::print("  {}\n", line); };
    results.push_back(tune::tune_bucket(bucket, sampler, run.protocol, hooks));
    fmt::print("  => {}\n", results.back().summary);
    // Reports are rewritten after every bucket, so an interrupted run keeps what it decided.
    tune::write_tune_report(run.report_dir / "report.json", results, run.protocol,
                            run.provenance);
    tune::write_markdown_summary(run.report_dir / "summary.md", results, run.protocol,
                                 run.provenance);
  }
  auto const rows = tune::tuned_rows(results, run.rows);
  // write_tuned_rows returns the rows it *replaced* (same key already in the file), not the
  // rows written: report both, and name the file whenever a row went into it.
  auto const replaced = tune::write_tuned_rows(run.output, rows);
  fmt::print("\n{} of {} buckets qualified; {} rows written to {} ({} replaced); report {}{}\n",
             rows.size(), plan.buckets.size(), rows.size(),
             rows.empty() ? "(nothing)" : run.output.string(), replaced,
             (run.report_dir / "report.json").string(),
             run.provenance.sampler == "replay" ? " (replayed samples, not a measurement)" : "");
  return rows.size();
}

}  // namespace moetune::app
