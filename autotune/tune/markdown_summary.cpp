#include "autotune/tune/markdown_summary.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/stats/gate.hpp"
#include "autotune/tune/failed_buckets.hpp"
#include "autotune/tune/tune_report.hpp"

namespace moetune::tune {

namespace {

std::string control_cell(const BucketResult& b) {
  auto const* a = b.final_attempt();
  if (!a) return "—";
  double const m = 100 * std::fabs(a->control_summary.median_reduction);
  if (a->control_verdict.passed) {
    return fmt::format("pass (\\|median\\| {:.2f}%, {}/{}){}", m, a->control_summary.wins,
                       a->control_summary.pairs,
                       b.attempts.size() > 1 ? ", after one re-measure" : "");
  }
  return fmt::format("FAIL ×{} (\\|median\\| {:.2f}%, {}/{})", b.attempts.size(), m,
                     a->control_summary.wins, a->control_summary.pairs);
}

std::string outcome_cell(const BucketResult& b) {
  // A baseline that failed during confirmation leaves a winner behind: the failure is what
  // the line must say, not the winner's inherited outcome.
  if (b.winner && !b.baseline_failure) {
    auto const& w = b.pairs[*b.winner];
    return fmt::format("{}: `{}` + `{}`", to_string(w.outcome), w.pair.stage1.name(),
                       w.pair.stage2.name());
  }
  return b.summary;
}

}  // namespace

std::string markdown_summary(std::span<const BucketResult> buckets, const ProtocolOptions& opt,
                             const Provenance& prov) {
  int const pairs = opt.confirm_blocks * opt.pairs_per_block;
  std::string out = fmt::format(
      "# moe-tune: {} on {} ({} CUs)\n\n"
      "Gate, declared before confirmation: median paired reduction ≥ {:.2f}% and wins ≥ {}/{} "
      "(the one-sided level of {}/{}){}, against the baseline and against the identical-kernel "
      "control. {} blocks × {} rounds, fresh buffers, graphs and a random placement pad per "
      "block; arm build order and sample order randomized and balanced (declared in each "
      "manifest); the control is timed in the same rounds{}. ",
      prov.sampler == "replay" ? "replayed samples (not a measurement)" : "tuning run",
      prov.device.empty() ? prov.arch : prov.device, prov.cu_num, 100 * opt.gate.min_median_reduction,
      stats::required_wins(opt.gate, pairs), pairs, opt.gate.reference_wins,
      opt.gate.reference_pairs,
      opt.gate.require_every_block
          ? fmt::format(", every block's median ≥ {:g} × the threshold", opt.gate.block_share)
          : std::string(),
      opt.confirm_blocks, opt.pairs_per_block,
      opt.futility_stop ? "; an attempt stops after a block once the gate can no longer pass "
                          "(futility stop: the verdict is the one all blocks would give)"
                        : "");
  out += opt.false_qualification_rate
             ? fmt::format("Calibrated false-qualification rate of this design: {:.1f}% ({}); "
                           "stated for that bucket only.\n\n",
                           100 * *opt.false_qualification_rate, opt.calibration)
             : std::string("False-qualification rate of this design: not calibrated.\n\n");
  out += "The reduction is the median paired gain, so it need not equal the ratio of the two "
         "median times.\n\n";
  out += fmt::format(
      "| bucket | actual M | baseline → tuned (µs) | median paired reduction | wins/{} | "
      "control | sign-test p | outcome |\n",
      pairs);
  out += "|---:|---:|---|---:|---:|---|---:|---|\n";
  for (auto const& b : buckets) {
    auto const* a = b.final_attempt();
    std::string times = "—", reduction = "—", wins = "—", p = "—";
    if (a) {
      auto const& s = a->comparison_summary;
      times = fmt::format("{:.2f} → {:.2f}", s.baseline_median_us, s.candidate_median_us);
      reduction = fmt::format("{:.2f}%", 100 * s.median_reduction);
      wins = fmt::format("{}/{}", s.wins, s.pairs);
      if (a->stopped_after_blocks) {
        wins += fmt::format(" (stopped after {} of {} blocks)", *a->stopped_after_blocks,
                            a->layout.blocks.size());
      }
      p = fmt::format("{:.2g}", s.sign_test_p);
    } else if (b.baseline_select_median_us) {
      times = fmt::format("{:.2f} → —", *b.baseline_select_median_us);
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", b.key.token, b.M, times,
                       reduction, wins, control_cell(b), p, outcome_cell(b));
  }
  return out;
}

void write_markdown_summary(const std::filesystem::path& file,
                            std::span<const BucketResult> buckets, const ProtocolOptions& options,
                            const Provenance& provenance) {
  std::vector<FailedBucket> failed;
  for (auto const& b : buckets) {
    if (auto f = failed_bucket(to_json(b))) failed.push_back(std::move(*f));
  }
  write_file_atomically(file, markdown_summary(buckets, options, provenance) +
                                  failed_buckets_markdown(failed));
}

}  // namespace moetune::tune
