#include "autotune/tune/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/stats/gate.hpp"
#include "autotune/stats/order_statistics.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "autotune/tune/confirmation.hpp"

namespace moetune::tune {

int CalibrationCase::qualified_without_futility_stop() const {
  return static_cast<int>(std::count_if(trials.begin(), trials.end(), [](const CalibrationTrial& t) {
    return t.qualified_without_futility_stop;
  }));
}

int CalibrationCase::futility_stops() const {
  return static_cast<int>(std::count_if(trials.begin(), trials.end(), [](const CalibrationTrial& t) {
    return t.futility_stop_attempt.has_value();
  }));
}

double CalibrationCase::mean_pairs_with_futility_stop() const {
  if (trials.empty()) return 0;
  double sum = 0;
  for (auto const& t : trials) sum += t.pairs_with_futility_stop;
  return sum / static_cast<double>(trials.size());
}

double CalibrationCase::mean_pairs_measured() const {
  if (trials.empty()) return 0;
  double sum = 0;
  for (auto const& t : trials) sum += t.pairs_measured;
  return sum / static_cast<double>(trials.size());
}

int CalibrationCase::qualified() const {
  return static_cast<int>(std::count_if(trials.begin(), trials.end(),
                                        [](const CalibrationTrial& t) { return t.qualified; }));
}

double CalibrationCase::rate() const {
  return trials.empty() ? 0.0 : static_cast<double>(qualified()) / static_cast<double>(trials.size());
}

stats::Interval CalibrationCase::interval() const {
  if (trials.empty()) return {};
  return stats::clopper_pearson(qualified(), static_cast<int>(trials.size()));
}

int CalibrationCase::control_failed_trials() const {
  return static_cast<int>(std::count_if(
      trials.begin(), trials.end(), [](const CalibrationTrial& t) { return !t.control_passed; }));
}

int CalibrationCase::attempts() const {
  int n = 0;
  for (auto const& t : trials) n += t.attempts;
  return n;
}

int CalibrationCase::control_failed_attempts() const {
  int n = 0;
  for (auto const& t : trials) n += t.control_failures;
  return n;
}

double CalibrationCase::median_gain() const {
  if (trials.empty()) return 0.0;
  std::vector<double> r;
  for (auto const& t : trials) r.push_back(t.median_reduction);
  return stats::exact_median(r);
}

TrialDistribution CalibrationCase::distribution(int required_wins) const {
  TrialDistribution d;
  if (trials.empty()) return d;
  d.pairs = trials.front().pairs;
  d.wins_histogram.assign(static_cast<std::size_t>(d.pairs) + 1, 0);
  std::vector<double> medians;
  double wins = 0;
  for (auto const& t : trials) {
    if (t.wins >= 0 && t.wins <= d.pairs) ++d.wins_histogram[static_cast<std::size_t>(t.wins)];
    wins += t.wins;
    if (t.wins >= required_wins) ++d.trials_at_required_wins;
    if (t.median_reduction > 0) ++d.trials_with_positive_median;
    medians.push_back(t.median_reduction);
  }
  d.mean_wins = wins / static_cast<double>(trials.size());
  std::sort(medians.begin(), medians.end());
  for (double q : {0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0}) {
    // Nearest rank: an observed value, never an interpolation.
    auto const n = medians.size();
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
    rank = std::clamp<std::size_t>(rank, 1, n);
    d.median_quantiles.push_back(medians[rank - 1]);
  }
  return d;
}

const CalibrationCase* CalibrationResult::null_case() const {
  for (auto const& c : cases) {
    if (!(c.slowdown > 0)) return &c;
  }
  return nullptr;
}

const CalibrationCase* CalibrationResult::slowdown_case(double slowdown) const {
  for (auto const& c : cases) {
    if (c.slowdown > 0 && std::fabs(c.slowdown - slowdown) < 1e-9) return &c;
  }
  return nullptr;
}

TargetVerdict judge_targets(const CalibrationResult& result, const CalibrationTargets& targets) {
  TargetVerdict v;
  auto describe = [](const CalibrationCase& c) {
    auto const ci = c.interval();
    return fmt::format("{}/{} = {:.1f}% (95% CI {:.1f}-{:.1f}%)", c.qualified(), c.trials.size(),
                       100 * c.rate(), 100 * ci.lower, 100 * ci.upper);
  };
  if (auto const* n = result.null_case(); n && !n->trials.empty()) {
    bool const enough = static_cast<int>(n->trials.size()) >= targets.min_null_trials;
    double const upper = n->interval().upper;
    v.false_rate_met = enough && upper <= targets.max_false_rate;
    v.lines.push_back(fmt::format(
        "false qualification {}: {}; the upper bound {:.2f}% {} target <= {:.1f}% over >= {} "
        "trials",
        v.false_rate_met ? "MET" : "NOT MET", describe(*n), 100 * upper,
        enough ? "against" : "(too few trials) against", 100 * targets.max_false_rate,
        targets.min_null_trials));
    auto const d = n->distribution(result.required_wins);
    double const centre = d.pairs / 2.0;
    double const tail = static_cast<double>(d.trials_at_required_wins) /
                        static_cast<double>(n->trials.size());
    bool const centred = std::fabs(d.mean_wins - centre) <= targets.max_mean_wins_offset;
    bool const thin_tail = tail <= targets.max_share_at_required_wins;
    v.null_centred = centred && thin_tail;
    v.lines.push_back(fmt::format(
        "null distribution {}: mean wins {:.2f} of {} (fair: {:g} +- {:g}), {} of {} trials "
        "({:.1f}%) at >= {} wins (target <= {:.1f}%), {} with a positive median",
        v.null_centred ? "CENTRED" : "NOT CENTRED", d.mean_wins, d.pairs, centre,
        targets.max_mean_wins_offset, d.trials_at_required_wins, n->trials.size(), 100 * tail,
        result.required_wins, 100 * targets.max_share_at_required_wins,
        d.trials_with_positive_median));
  } else {
    v.lines.push_back("false qualification NOT MEASURED: the null case was not run");
    v.lines.push_back("null distribution NOT MEASURED: the null case was not run");
  }
  if (auto const* p = result.slowdown_case(targets.power_slowdown); p && !p->trials.empty()) {
    v.power_met = p->rate() >= targets.min_power;
    v.lines.push_back(fmt::format("power at {:g}% slowdown {}: {} against target >= {:.0f}%",
                                  100 * targets.power_slowdown, v.power_met ? "MET" : "NOT MET",
                                  describe(*p), 100 * targets.min_power));
  } else {
    v.lines.push_back(fmt::format("power at {:g}% slowdown NOT MEASURED: that slowdown was not run",
                                  100 * targets.power_slowdown));
  }
  return v;
}

namespace {

constexpr const char* kBaselineArm = "baseline";
constexpr const char* kCandidateArm = "candidate";
constexpr const char* kControlArm = "control";

// Trials of different cases and indices must never share placement or inputs: each gets a
// run seed of its own, from which its blocks' seeds follow exactly as tune derives them from
// the run seed. The case is keyed by its slowdown in basis points, so that a run of the null
// case alone and a run of the slowdowns alone never reuse each other's seeds either.
std::uint64_t trial_seed(std::uint64_t seed, double slowdown, int trial) {
  auto const key = static_cast<int>(std::lround(slowdown * 1e4));
  return block_seed(block_seed(seed, measure::Phase::confirm, 100000 + key, trial), measure::Phase::confirm, 0, 0);
}

CalibrationTrial run_trial(measure::Sampler& sampler, const CalibrationOptions& opt,
                           const ConfirmArms& arms, std::uint64_t seed, int index) {
  auto const started = std::chrono::steady_clock::now();
  CalibrationTrial trial;
  trial.index = index;
  // Every block is measured (the null distribution is the full design's); tune's futility
  // stop is applied to the samples afterwards. The two designs are followed side by side
  // over the same attempts: each is decided when its control passes or the last re-measure
  // is done, and an attempt is measured while either still needs it (the stop's control is
  // judged on the pairs before the stop, so it can ask for a re-measure the full design does
  // not, or the other way round).
  auto measured = opt.protocol;
  measured.futility_stop = false;
  int const last = opt.protocol.control_remeasures;
  bool full_done = false;
  bool stop_done = !opt.protocol.futility_stop;
  bool stop_qualified = false;
  for (int a = 0; a <= last && !(full_done && stop_done); ++a) {
    // Exactly the layout tune would declare for a run seeded with this trial's seed.
    auto const layout =
        plan_attempt(seed, a, opt.protocol.confirm_blocks, opt.protocol.pairs_per_block);
    if (a == 0) {
      for (auto const& b : layout.blocks) trial.first_block_seeds.push_back(b.seed);
    }
    ConfirmationResult r;
    try {
      r = run_confirmation(sampler, measured, arms, layout);
    } catch (const measure::SamplerError& e) {
      throw Error(fmt::format("the baseline faulted while being timed: {}", e.what()));
    }
    // Every arm runs the baseline's code: a "candidate" fault is the baseline's too.
    if (r.fault) throw Error("the baseline faulted while being timed: " + r.fault->message);
    auto const& att = r.attempt;
    trial.attempts = a + 1;
    int const attempt_pairs = static_cast<int>(att.rounds.size());
    trial.pairs_measured += attempt_pairs;
    if (!full_done) {
      // The full design: what the distribution and the control statistics describe.
      trial.median_reduction = att.comparison_summary.median_reduction;
      trial.wins = att.comparison_summary.wins;
      trial.pairs = att.comparison_summary.pairs;
      trial.block_median_reductions = att.comparison_summary.block_median_reductions;
      trial.control_median_reduction = att.control_summary.median_reduction;
      trial.control_wins = att.control_summary.wins;
      trial.versus_control_median_reduction = att.versus_control_summary.median_reduction;
      trial.versus_control_wins = att.versus_control_summary.wins;
      trial.rounds = att.rounds;
      trial.gate_passed = att.gate.passed;
      trial.control_passed = att.control_verdict.passed;
      if (!trial.control_passed) ++trial.control_failures;
      // As in tune: a failed control measures once more; the last attempt decides.
      full_done = trial.control_passed || a == last;
    }
    if (!stop_done) {
      // Tune's design: where it would have stopped this attempt, and what it then does.
      if (auto const stop = find_futility_stop(opt.protocol.gate, att.rounds, layout)) {
        if (!trial.futility_stop_attempt) {
          trial.futility_stop_attempt = a;
          trial.futility_stop_after_blocks = stop->after_blocks;
        }
        trial.pairs_with_futility_stop += stop->pairs;
        stop_done = stop->control_passed || a == last;  // the gate failed: not qualified
      } else {
        trial.pairs_with_futility_stop += attempt_pairs;
        stop_done = att.control_verdict.passed || a == last;
        stop_qualified = att.gate.passed && att.control_verdict.passed;
      }
    }
  }
  trial.qualified_without_futility_stop = trial.gate_passed && trial.control_passed;
  if (!opt.protocol.futility_stop) {
    trial.pairs_with_futility_stop = trial.pairs_measured;
    stop_qualified = trial.qualified_without_futility_stop;
  }
  trial.qualified = stop_qualified;
  trial.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return trial;
}

}  // namespace

CalibrationResult calibrate(const measure::BucketPlan& bucket, measure::Sampler& sampler,
                            const CalibrationOptions& opt, const CalibrationHooks& hooks) {
  return calibrate(bucket, std::vector<DeviceWorker>{{&sampler, ""}}, opt, hooks);
}

CalibrationResult calibrate(const measure::BucketPlan& bucket, const std::vector<DeviceWorker>& workers,
                            const CalibrationOptions& opt, const CalibrationHooks& hooks) {
  if (workers.empty()) throw std::invalid_argument("calibrate: no measuring worker");
  auto const& p = opt.protocol;
  if (opt.null_trials < 0 || opt.power_trials < 0 || opt.reference_samples < 1 ||
      p.confirm_blocks < 1 || p.pairs_per_block < 1 || p.control_remeasures < 0) {
    throw std::invalid_argument("calibrate: trial, sample and block counts must be positive");
  }
  for (double s : opt.slowdowns) {
    if (!(s > 0 && s < 1)) {
      throw std::invalid_argument(fmt::format("calibrate: slowdown {} is not in (0, 1)", s));
    }
  }
  auto log = [&](const std::string& line) {
    if (hooks.log) hooks.log(line);
  };
  auto const started = std::chrono::steady_clock::now();
  CalibrationResult res;
  res.baseline = baseline_pair(bucket);
  res.required_wins = stats::required_wins(p.gate, p.confirm_blocks * p.pairs_per_block);
  res.futility_stop = p.futility_stop;

  // Every worker's errors name it when there are several.
  auto on = [&](const DeviceWorker& w) {
    return w.device.empty() || workers.size() == 1 ? std::string() : " on " + w.device;
  };
  for (auto const& w : workers) {
    w.sampler->begin_bucket(bucket);
    auto const prep = w.sampler->prepare(res.baseline);
    if (!prep.ok()) {
      throw Error(fmt::format("the baseline {} is not ready{}: {}: {}", res.baseline.name(), on(w),
                              to_string(prep.status), prep.detail));
    }
    auto const v = w.sampler->verify(res.baseline, res.baseline);
    if (!v.passed) {
      throw Error(fmt::format("the baseline {} fails verification{}: {}", res.baseline.name(), on(w),
                              v.detail));
    }
  }
  auto& sampler = *workers.front().sampler;

  // The delays are fractions of what the baseline takes here, measured on a block of its own.
  if (!opt.slowdowns.empty() && opt.power_trials > 0) {
    measure::BlockSpec spec;
    spec.phase = measure::Phase::select;
    spec.seed = block_seed(p.seed, measure::Phase::select, 0, 0);
    spec.arms = {{kBaselineArm, res.baseline}};
    try {
      sampler.begin_block(spec);
      for (int s = 0; s < opt.reference_samples; ++s) {
        res.reference_samples_us.push_back(sampler.sample_us(kBaselineArm, measure::TimedUnit::full));
      }
    } catch (const measure::SamplerError& e) {
      throw Error(fmt::format("the baseline faulted while its reference time was measured: {}",
                              e.what()));
    }
    res.reference_median_us = stats::exact_median(res.reference_samples_us);
    log(fmt::format("baseline {}: median full time {:.3f} us over {} samples",
                    res.baseline.name(), res.reference_median_us, opt.reference_samples));
  }

  struct Plan {
    ConfirmArms arms;
    int trials;
  };
  std::vector<Plan> plans;
  if (opt.null_trials > 0) {
    CalibrationCase c;
    c.name = "null";
    res.cases.push_back(c);
    // Exactly the arms of a real confirmation whose winner happens to be the baseline.
    plans.push_back({{{kBaselineArm, res.baseline},
                      {kCandidateArm, res.baseline},
                      {kControlArm, res.baseline}},
                     opt.null_trials});
  }
  if (opt.power_trials > 0) {
    for (double s : opt.slowdowns) {
      CalibrationCase c;
      c.name = fmt::format("slowdown {:g}%", 100 * s);
      c.slowdown = s;
      c.delay_ns = static_cast<std::uint64_t>(std::llround(s * res.reference_median_us * 1000.0));
      measure::Arm slowed{kBaselineArm, res.baseline, c.delay_ns};
      measure::Arm plain{kCandidateArm, res.baseline, std::uint64_t{0}};
      measure::Arm control{kControlArm, res.baseline, c.delay_ns};
      res.cases.push_back(c);
      plans.push_back({{slowed, plain, control}, opt.power_trials});
      log(fmt::format("{}: the baseline arm and its control wait {} ns after stage two; the "
                      "candidate waits 0 ns",
                      c.name, *c.delay_ns));
    }
  }

  int rounds = 0;
  for (auto const& pl : plans) rounds = std::max(rounds, pl.trials);
  // Round t (trial t of every case) is the unit of work: one worker runs all its trials, so
  // slow drift of a device spreads over the cases alike. Rounds are added to the result in
  // order as the prefix of finished ones grows.
  std::vector<std::optional<std::vector<CalibrationTrial>>> finished(static_cast<std::size_t>(rounds));
  std::vector<std::size_t> order(finished.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::size_t in_result = 0;
  std::mutex lock;  // finished, res and the hooks
  run_on_workers(order, workers.size(), [&](std::size_t round, std::size_t w) {
    auto const t = static_cast<int>(round);
    std::vector<CalibrationTrial> trials;
    for (std::size_t c = 0; c < plans.size(); ++c) {
      if (t >= plans[c].trials) continue;
      try {
        trials.push_back(run_trial(*workers[w].sampler, opt, plans[c].arms,
                                   trial_seed(p.seed, res.cases[c].slowdown, t), t));
      } catch (const Error& e) {
        if (on(workers[w]).empty()) throw;
        throw Error(fmt::format("{}{}", e.what(), on(workers[w])));
      }
      trials.back().device = workers[w].device;
    }
    std::lock_guard<std::mutex> guard(lock);
    finished[round] = std::move(trials);
    while (in_result < finished.size() && finished[in_result]) {
      auto& done = *finished[in_result];
      std::size_t k = 0;
      for (std::size_t c = 0; c < plans.size(); ++c) {
        if (static_cast<int>(in_result) < plans[c].trials) res.cases[c].trials.push_back(std::move(done[k++]));
      }
      ++in_result;
      if (hooks.on_round) hooks.on_round(static_cast<int>(in_result), res);
    }
  });
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return res;
}

}  // namespace moetune::tune
