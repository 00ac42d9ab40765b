#include "autotune/tune/bucket_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "autotune/stats/order_statistics.hpp"

namespace moetune::tune {

measure::Outcome BucketResult::outcome_of(const CandidateSlot& slot) const {
  if (slot.pruned) return measure::Outcome::pruned;
  if (slot.is_baseline_pair || !slot.pair) return measure::Outcome::not_significant;
  return pairs.at(*slot.pair).outcome;
}

std::string BucketResult::reason_of(const CandidateSlot& slot) const {
  if (slot.pruned) return *slot.pruned;
  if ((slot.is_baseline_pair || !slot.pair) && slot.code_twin_of) {
    return "code twin of the baseline " + *slot.code_twin_of +
           ": the same machine code under another name, nothing to gain";
  }
  if (slot.is_baseline_pair || !slot.pair) {
    return "its pipeline is the baseline configuration itself: nothing to gain";
  }
  if (slot.code_twin_of) {
    return "code twin of " + *slot.code_twin_of + " (the same machine code, timed once): " +
           pairs.at(*slot.pair).reason;
  }
  return pairs.at(*slot.pair).reason;
}

BucketStatus BucketResult::status() const {
  if (setup_failure) return BucketStatus::setup_failed;
  if (baseline_failure) return BucketStatus::baseline_failed;
  return qualified ? BucketStatus::qualified : BucketStatus::not_qualified;
}

const ConfirmAttempt* BucketResult::final_attempt() const {
  return attempts.empty() ? nullptr : &attempts.back();
}

namespace {

constexpr const char* kBaselineArm = "baseline";
constexpr const char* kCandidateArm = "candidate";
constexpr const char* kControlArm = "control";

// The baseline itself failed: no honest comparison exists for this bucket. Every candidate
// still open ends baseline_failed (not the baseline's own kind: a wrong_result there would
// blame the candidate), with a reason that names the baseline's failure.
struct BaselineFailure {
  measure::Outcome kind;
  std::string message;
};

class BucketRun {
 public:
  BucketRun(const measure::BucketPlan& bucket, measure::Sampler& sampler, const ProtocolOptions& options,
            const TuneHooks& hooks)
      : m_bucket(bucket), m_sampler(sampler), m_opt(options), m_hooks(hooks) {}

  BucketResult run() {
    m_res.key = m_bucket.key;
    m_res.line = m_bucket.line;
    m_res.M = m_bucket.M;
    m_res.shape = m_bucket.shape;
    m_res.baseline = baseline_pair(m_bucket);
    auto pairs = make_candidate_pairs(m_bucket);
    m_res.slots = std::move(pairs.slots);
    for (auto& p : pairs.pairs) {
      PairRecord rec;
      rec.pair = std::move(p);
      m_res.pairs.push_back(std::move(rec));
    }
    m_open.assign(m_res.pairs.size(), true);

    try {
      PhaseTimer t(m_res.seconds.setup);
      m_sampler.begin_bucket(m_bucket);
    } catch (const std::exception& e) {
      // Neither a candidate's failure nor the baseline's (weights, a worker, memory): the
      // bucket ends undecided, and the run goes on with the next one.
      close_all_open(measure::Outcome::setup_failed,
                     std::string("not measured: the bucket's set-up failed: ") + e.what());
      m_res.setup_failure = e.what();
      m_res.summary = std::string("set-up failed: ") + e.what();
      return std::move(m_res);
    }
    try {
      check_baseline();
      std::vector<std::size_t> alive;
      {
        PhaseTimer t(m_res.seconds.check);
        alive = prepare_and_verify();
      }
      std::vector<std::size_t> finalists;
      {
        PhaseTimer t(m_res.seconds.screen);  // finalist verification is moved to `verify`
        finalists = screen(alive);
      }
      std::optional<std::size_t> winner;
      {
        PhaseTimer t(m_res.seconds.select);
        winner = select(finalists);
      }
      if (winner) {
        PhaseTimer t(m_res.seconds.confirm);
        confirm(*winner);
      }
    } catch (const BaselineFailure& f) {
      close_all_open(measure::Outcome::baseline_failed,
                     fmt::format("not measured: the baseline {} failed ({}): {}",
                                 m_res.baseline.name(), to_string(f.kind), f.message));
      m_res.baseline_failure = BaselineFailureRecord{f.kind, f.message};
      m_res.summary = fmt::format("baseline failed: {}: {}", to_string(f.kind), f.message);
    }
    if (m_res.summary.empty()) m_res.summary = "no pipeline was confirmed";
    // Every pipeline must have its one outcome by now; an open one is a bug in this file.
    for (std::size_t i = 0; i < m_open.size(); ++i) {
      if (m_open[i]) {
        throw std::logic_error("tune_bucket: " + m_res.pairs[i].pair.name() + " has no outcome");
      }
    }
    return std::move(m_res);
  }

 private:
  void log(const std::string& line) const {
    if (m_hooks.log) m_hooks.log(line);
  }
  // A pair is open until it gets its final outcome, which it gets exactly once.
  [[nodiscard]] bool is_open(std::size_t i) const { return m_open.at(i); }
  void close(std::size_t i, measure::Outcome outcome, std::string reason) {
    if (!m_open.at(i)) throw std::logic_error("tune_bucket: a pair was given two outcomes");
    m_open[i] = false;
    m_res.pairs[i].outcome = outcome;
    m_res.pairs[i].reason = std::move(reason);
  }

  void close_all_open(measure::Outcome outcome, const std::string& reason) {
    for (std::size_t i = 0; i < m_res.pairs.size(); ++i) {
      if (is_open(i)) close(i, outcome, reason);
    }
  }

  // Adds the wall time of its scope to a PhaseSeconds field (also when an exception leaves it).
  class PhaseTimer {
   public:
    explicit PhaseTimer(double& into) : m_into(into), m_start(std::chrono::steady_clock::now()) {}
    ~PhaseTimer() { m_into += seconds_since(m_start); }
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;

   private:
    double& m_into;
    std::chrono::steady_clock::time_point m_start;
  };

  void check_baseline() {
    measure::Preparation prep;
    {
      PhaseTimer t(m_res.seconds.check);
      prep = m_sampler.prepare(m_res.baseline);
    }
    if (!prep.ok()) throw BaselineFailure{prep.status, prep.detail};
    PhaseTimer t(m_res.seconds.verify);
    auto const v = m_sampler.verify(m_res.baseline, m_res.baseline);
    m_res.baseline_verification = v;
    if (!v.passed) throw BaselineFailure{v.failure, "verification: " + v.detail};
  }

  // Correctness before timing: every pipeline runs once at the bucket's M against the
  // reference; one that fails is never timed. (The full gates run on the finalists, below.)
  std::vector<std::size_t> prepare_and_verify() {
    std::vector<std::size_t> alive;
    auto const start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < m_res.pairs.size(); ++i) {
      auto& p = m_res.pairs[i];
      auto const prep = m_sampler.prepare(p.pair);
      if (!prep.ok()) {
        close(i, prep.status, prep.detail);
        continue;
      }
      auto v = m_sampler.quick_check(p.pair);
      p.verification = v;
      if (!v.passed) {
        close(i, v.failure,
              fmt::format("{} (max abs {:.3g}, max rel {:.3g})", v.detail, v.max_abs, v.max_rel));
        continue;
      }
      alive.push_back(i);
      if ((i + 1) % 50 == 0) {
        log(fmt::format("token {}: checked {}/{} pipelines ({:.1f} s)", m_res.key.token, i + 1,
                        m_res.pairs.size(), seconds_since(start)));
      }
    }
    log(fmt::format("token {}: {} pipelines, {} correct at M={} ({:.1f} s)", m_res.key.token,
                    m_res.pairs.size(), alive.size(), m_res.M, seconds_since(start)));
    return alive;
  }

  static double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }

  // Starts a block; a candidate that fails while being built is closed and the block is
  // started again without it (fresh, as a block must be). A baseline failure ends the bucket.
  void start_block(measure::BlockSpec spec, std::map<std::string, std::size_t>& arm_pair) {
    for (;;) {
      try {
        m_sampler.begin_block(spec);
        return;
      } catch (const measure::SamplerError& e) {
        auto const it = arm_pair.find(e.arm());
        if (it == arm_pair.end()) throw BaselineFailure{e.kind(), e.what()};
        close(it->second, e.kind(), e.what());
        std::erase_if(spec.arms, [&](const measure::Arm& a) { return a.label == e.arm(); });
        arm_pair.erase(it);
      }
    }
  }

  // One sample of a candidate arm; a fault closes that candidate (nullopt).
  std::optional<double> sample_candidate(const std::string& arm, std::size_t pair,
                                         measure::TimedUnit unit = measure::TimedUnit::full) {
    try {
      return m_sampler.sample_us(arm, unit);
    } catch (const measure::SamplerError& e) {
      close(pair, e.kind(), e.what());
      return std::nullopt;
    }
  }
  double sample_baseline(const std::string& arm) {
    try {
      return m_sampler.sample_us(arm, measure::TimedUnit::full);
    } catch (const measure::SamplerError& e) {
      throw BaselineFailure{e.kind(), e.what()};
    }
  }

  // Interleaved rounds over the baseline and `members`; the start rotates every round so no
  // arm always runs right after the same neighbour. Returns the baseline's samples.
  std::vector<double> rounds(measure::Phase phase, int index, const std::vector<std::size_t>& members,
                             int count, std::vector<double> PairRecord::*store, bool race = false) {
    measure::BlockSpec spec;
    spec.phase = phase;
    spec.index = index;
    spec.seed = block_seed(m_opt.seed, phase, 0, index);
    if (phase == measure::Phase::screen) {
      // Kept arms (#15): the baseline is built once for every screen block of the bucket, each
      // candidate once; a new arm is warmed screen_warmup_replays times (ProtocolOptions).
      spec.keep_arms = true;
      spec.warmup_replays = m_opt.screen_warmup_replays;
      if (m_opt.screen_repeats > 0) spec.repeats = m_opt.screen_repeats;
    }
    spec.arms.push_back({kBaselineArm, m_res.baseline});
    std::map<std::string, std::size_t> arm_pair;
    for (auto i : members) {
      spec.arms.push_back({m_res.pairs[i].pair.name(), m_res.pairs[i].pair});
      arm_pair[m_res.pairs[i].pair.name()] = i;
    }
    start_block(spec, arm_pair);
    std::vector<std::string> order{kBaselineArm};
    for (auto const& [label, i] : arm_pair) order.push_back(label);
    std::vector<double> base;
    for (int r = 0; r < count; ++r) {
      for (std::size_t k = 0; k < order.size(); ++k) {
        auto const& label = order[(k + static_cast<std::size_t>(r)) % order.size()];
        if (label == kBaselineArm) {
          base.push_back(sample_baseline(label));
          continue;
        }
        auto const i = arm_pair.at(label);
        if (!is_open(i)) continue;  // faulted earlier in this block
        if (m_res.pairs[i].screen_stopped) continue;  // raced out (below)
        if (auto t = sample_candidate(label, i)) (m_res.pairs[i].*store).push_back(*t);
      }
      // Racing: stop sampling a candidate whose fastest sample so far is clearly slower than
      // this block's baseline (screen() gives it its outcome): after the first round by the
      // wide first-cut margin, from screen_race_after rounds on by the race margin.
      double margin = 0;
      if (race && r + 1 < count) {
        if (r + 1 >= m_opt.screen_race_after && m_opt.screen_race_margin > 0) {
          margin = m_opt.screen_race_margin;
        } else if (r == 0) {
          margin = m_opt.screen_first_cut_margin;
        }
      }
      if (margin > 0) {
        double const base_now = stats::exact_median(base);
        double const bar = base_now * (1 + margin);
        for (auto const& [label, i] : arm_pair) {
          auto& p = m_res.pairs[i];
          if (!is_open(i) || p.screen_stopped || (p.*store).empty()) continue;
          if (*std::min_element((p.*store).begin(), (p.*store).end()) > bar) {
            p.screen_stopped = true;
            p.screen_stop_margin = margin;
            p.screen_stop_baseline_us = base_now;
            m_sampler.release_arm(label);  // sampled no more: its graph and buffers go now
          }
        }
      }
    }
    if (spec.keep_arms) {
      // The block's candidates are done (a candidate is screened in one block only); the
      // baseline stays built for the next screen block.
      for (auto const& [label, i] : arm_pair) m_sampler.release_arm(label);
    }
    return base;
  }

  std::vector<std::size_t> screen(const std::vector<std::size_t>& alive) {
    if (alive.empty()) return {};
    auto const start = std::chrono::steady_clock::now();
    int const per_block = std::max(1, m_opt.screen_block_size);
    int block = 0;
    std::size_t stopped = 0;
    for (std::size_t first = 0; first < alive.size(); first += per_block, ++block) {
      std::vector<std::size_t> members(
          alive.begin() + static_cast<std::ptrdiff_t>(first),
          alive.begin() + static_cast<std::ptrdiff_t>(std::min(alive.size(), first + per_block)));
      auto const base = rounds(measure::Phase::screen, block, members, m_opt.screen_samples,
                               &PairRecord::screen_us,
                               m_opt.screen_race_margin > 0 || m_opt.screen_first_cut_margin > 0);
      m_res.baseline_screen_us.insert(m_res.baseline_screen_us.end(), base.begin(), base.end());
      // Scores relative to the baseline of the same block: screening blocks differ in
      // placement, a ratio within a block does not carry that difference.
      double const base_median = stats::exact_median(base);
      for (auto i : members) {
        auto& p = m_res.pairs[i];
        if (is_open(i) && !p.screen_us.empty()) {
          p.screen_score = stats::exact_median(p.screen_us) / base_median;
        }
        if (is_open(i) && p.screen_stopped) {
          ++stopped;
          // Against the baseline's median when it was stopped (what the bar was made of).
          double const fastest = *std::min_element(p.screen_us.begin(), p.screen_us.end());
          close(i, measure::Outcome::slower,
                fmt::format("screen: stopped after {} of {} samples: its fastest was {:.2f}% of "
                            "the baseline's time in its block so far, more than {:.1f}% slower",
                            p.screen_us.size(), m_opt.screen_samples,
                            100 * fastest / p.screen_stop_baseline_us, 100 * p.screen_stop_margin));
        }
      }
    }
    m_sampler.release_arm(kBaselineArm);  // the screen's last arm: nothing kept past it
    std::vector<std::size_t> ranked;
    for (auto i : alive) {
      if (is_open(i) && m_res.pairs[i].screen_score) ranked.push_back(i);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [&](std::size_t a, std::size_t b) {
      return *m_res.pairs[a].screen_score < *m_res.pairs[b].screen_score;
    });
    // In rank order: a finalist must pass every gate before selection; one that does not is
    // wrong_result and the next in rank takes its place. The margin is measured from the best
    // *verified* pipeline (the baseline, score 1, counts), so a fast wrong one cannot push
    // correct ones out.
    double best = 1.0;
    std::vector<std::size_t> finalists;
    for (std::size_t rank = 0; rank < ranked.size(); ++rank) {
      auto const i = ranked[rank];
      auto& p = m_res.pairs[i];
      double const score = *p.screen_score;
      if (static_cast<int>(finalists.size()) >= m_opt.finalists) {
        close(i, measure::Outcome::slower,
              fmt::format("screen: rank {} of {} ({:.2f}% of the baseline's time); only the top "
                          "{} become finalists",
                          rank + 1, ranked.size(), 100 * score, m_opt.finalists));
        continue;
      }
      if (score > best * (1 + m_opt.screen_margin)) {
        close(i, measure::Outcome::slower,
              fmt::format("screen: {:.2f}% of the baseline's time, more than {:.1f}% slower than "
                          "the best verified ({:.2f}%)",
                          100 * score, 100 * m_opt.screen_margin, 100 * best));
        continue;
      }
      auto const verify_start = std::chrono::steady_clock::now();
      auto v = m_sampler.verify(p.pair, m_res.baseline);
      double const verify_s = seconds_since(verify_start);
      m_res.seconds.verify += verify_s;
      m_res.seconds.screen -= verify_s;  // screen's own timer covers this call too
      p.verification = v;
      if (!v.passed) {
        close(i, v.failure,
              fmt::format("finalist verification: {} (max abs {:.3g}, max rel {:.3g})", v.detail,
                          v.max_abs, v.max_rel));
        continue;
      }
      best = std::min(best, score);
      finalists.push_back(i);
    }
    log(fmt::format("token {}: screened {} pipelines ({} stopped early), {} verified finalists "
                    "({:.1f} s)",
                    m_res.key.token, ranked.size() + stopped, stopped, finalists.size(),
                    seconds_since(start)));
    return finalists;
  }

  std::optional<std::size_t> select(const std::vector<std::size_t>& finalists) {
    if (finalists.empty()) {
      m_res.summary = "no finalist survived verification and screening";
      return std::nullopt;
    }
    m_res.baseline_select_us =
        rounds(measure::Phase::select, 0, finalists, m_opt.select_rounds, &PairRecord::select_us);
    double const base = stats::exact_median(m_res.baseline_select_us);
    m_res.baseline_select_median_us = base;
    std::optional<std::size_t> best;
    for (auto i : finalists) {
      auto& p = m_res.pairs[i];
      if (!is_open(i) || p.select_us.empty()) continue;
      p.select_median_us = stats::exact_median(p.select_us);
      if (!best || *p.select_median_us < *m_res.pairs[*best].select_median_us) best = i;
    }
    if (!best) {
      m_res.summary = "every finalist failed during selection";
      return std::nullopt;
    }
    double const win = *m_res.pairs[*best].select_median_us;
    for (auto i : finalists) {
      auto& p = m_res.pairs[i];
      if (!is_open(i) || i == *best) continue;
      close(i, measure::Outcome::slower,
            fmt::format("select: median {:.3f} us, behind {} at {:.3f} us", *p.select_median_us,
                        m_res.pairs[*best].pair.name(), win));
    }
    if (!(win < base)) {
      close(*best, measure::Outcome::slower,
            fmt::format("select: fastest finalist, but its median {:.3f} us is not below the "
                        "baseline's {:.3f} us",
                        win, base));
      m_res.summary = "no finalist beat the baseline in selection";
      return std::nullopt;
    }
    return best;
  }

  Manifest declare(std::size_t winner) const {
    Manifest m;
    m.bucket = m_res.key.describe();
    m.token = m_res.key.token;
    m.M = m_res.M;
    m.baseline = m_res.baseline.name();
    m.candidate = m_res.pairs[winner].pair.name();
    m.gate = m_opt.gate;
    m.blocks = m_opt.confirm_blocks;
    m.pairs_per_block = m_opt.pairs_per_block;
    m.pairs = m_opt.confirm_blocks * m_opt.pairs_per_block;
    m.required_wins = stats::required_wins(m_opt.gate, m.pairs);
    m.repeats = m_sampler.repeats();
    m.max_remeasures = m_opt.control_remeasures;
    m.order = confirmation_order_rule();
    m.control = confirmation_control_rule();
    m.stopping = confirmation_stopping_rule(m_opt.futility_stop);
    for (int a = 0; a <= m_opt.control_remeasures; ++a) {
      auto layout = plan_attempt(m_opt.seed, a, m_opt.confirm_blocks, m_opt.pairs_per_block);
      std::vector<std::uint64_t> seeds;
      for (auto const& b : layout.blocks) seeds.push_back(b.seed);
      m.block_seeds.push_back(std::move(seeds));
      m.layouts.push_back(std::move(layout));
    }
    // A measured rate belongs to the workload it was measured on.
    if (m_opt.calibration_scope) {
      if (m_opt.calibration_scope->matches(m_bucket)) {
        m.false_qualification_rate = m_opt.false_qualification_rate;
        m.calibration = m_opt.calibration;
      } else {
        m.calibration = "not calibrated for this bucket (the calibration given was measured for " +
                        m_opt.calibration_scope->describe() + ")";
      }
    } else {
      m.false_qualification_rate = m_opt.false_qualification_rate;
      m.calibration = m_opt.calibration.empty() ? "not calibrated" : m_opt.calibration;
    }
    return m;
  }

  void confirm(std::size_t winner) {
    auto& w = m_res.pairs[winner];
    m_res.winner = winner;
    m_res.manifest = declare(winner);
    // The declaration leaves this function before a single confirmation sample exists.
    if (m_hooks.on_manifest) m_hooks.on_manifest(*m_res.manifest);

    ConfirmArms const arms{{kBaselineArm, m_res.baseline}, {kCandidateArm, w.pair},
                           {kControlArm, m_res.baseline}};
    for (int a = 0; a <= m_opt.control_remeasures; ++a) {
      ConfirmationResult result;
      try {
        result = run_confirmation(m_sampler, m_opt, arms,
                                  m_res.manifest->layouts.at(static_cast<std::size_t>(a)));
      } catch (const measure::SamplerError& e) {
        // The baseline or its control arm faulted: no honest comparison is left.
        throw BaselineFailure{e.kind(), e.what()};
      }
      if (result.fault) {
        close(winner, result.fault->kind, result.fault->message);
        // A candidate that could not even be built leaves the default summary.
        if (!result.fault->while_building) {
          m_res.summary = "the confirmed pipeline failed while being timed";
        }
        return;
      }
      auto& att = result.attempt;
      bool const control_ok = att.control_verdict.passed;
      log(fmt::format("token {}: confirmation attempt {}: median {:.3f}%, wins {}/{} (vs control "
                      "{:.3f}%, {}/{}), gate {}, control {} ({:.3f}%)",
                      m_res.key.token, a, 100 * att.comparison_summary.median_reduction,
                      att.comparison_summary.wins, att.comparison_summary.pairs,
                      100 * att.versus_control_summary.median_reduction,
                      att.versus_control_summary.wins, att.versus_control_summary.pairs,
                      att.gate.passed ? "passed" : "failed", control_ok ? "passed" : "FAILED",
                      100 * att.control_summary.median_reduction));
      m_res.attempts.push_back(std::move(att));
      // A failed control is measured again, after a whole attempt or a futility stop alike: a
      // biased control can make the gate against it hopeless, which is no verdict on the
      // candidate.
      if (control_ok) break;
    }

    auto const& last = m_res.attempts.back();
    auto join = [](const std::vector<std::string>& reasons) {
      std::string out;
      for (auto const& r : reasons) out += (out.empty() ? "" : "; ") + r;
      return out;
    };
    // A futility stop's control covers the pairs measured before it: a failed one still
    // says the timing was biased, which is the more useful of the two true verdicts.
    std::string const stopped =
        last.stopped_after_blocks
            ? fmt::format(" (futility stop after {} of {} blocks)", *last.stopped_after_blocks,
                          last.layout.blocks.size())
            : std::string();
    if (!last.control_verdict.passed) {
      close(winner, measure::Outcome::control_failed,
            fmt::format("identical-kernel control failed in {} attempt(s){}: {}",
                        m_res.attempts.size(), stopped, join(last.control_verdict.reasons)));
      m_res.summary = "control failed: timing biased, no row";
      return;
    }
    if (!last.gate.passed) {
      close(winner, measure::Outcome::not_significant, "gate: " + join(last.gate.reasons));
      m_res.summary = "not significant under the predeclared gate" + stopped;
      return;
    }
    if (!measure_stage_times(winner)) return;
    close(winner, measure::Outcome::qualified, "gate: " + join(last.gate.reasons));
    m_res.qualified = true;
    m_res.summary = "qualified";
  }

  // us1 / us2 for the tuned row: each stage of the qualified pair timed alone on its own
  // block (the gate judged the full MoE; these only fill AITER's columns), at the row's
  // `token`, where AITER's tuner times a row, not at the bucket's actual_m.
  bool measure_stage_times(std::size_t winner) {
    measure::BlockSpec spec;
    spec.phase = measure::Phase::stage_times;
    m_res.stage_times_M = m_bucket.key.token > 0 ? m_bucket.key.token : m_bucket.M;
    spec.M = m_res.stage_times_M;
    spec.seed = block_seed(m_opt.seed, measure::Phase::stage_times, 0, 0);
    spec.arms = {{kCandidateArm, m_res.pairs[winner].pair}};
    spec.units = {measure::TimedUnit::stage1, measure::TimedUnit::stage2};
    std::map<std::string, std::size_t> arm_pair{{kCandidateArm, winner}};
    start_block(spec, arm_pair);
    if (!is_open(winner)) return false;
    for (int s = 0; s < m_opt.stage_time_samples; ++s) {
      auto t1 = sample_candidate(kCandidateArm, winner, measure::TimedUnit::stage1);
      auto t2 = t1 ? sample_candidate(kCandidateArm, winner, measure::TimedUnit::stage2) : std::nullopt;
      if (!t1 || !t2) {
        m_res.summary = "the qualified pipeline failed while its stages were timed";
        return false;
      }
      m_res.stage1_samples_us.push_back(*t1);
      m_res.stage2_samples_us.push_back(*t2);
    }
    m_res.stage1_us = stats::exact_median(m_res.stage1_samples_us);
    m_res.stage2_us = stats::exact_median(m_res.stage2_samples_us);
    return true;
  }

  const measure::BucketPlan& m_bucket;
  measure::Sampler& m_sampler;
  const ProtocolOptions& m_opt;
  const TuneHooks& m_hooks;
  BucketResult m_res;
  std::vector<bool> m_open;  // per pair: still without an outcome
};

}  // namespace

BucketResult tune_bucket(const measure::BucketPlan& bucket, measure::Sampler& sampler,
                         const ProtocolOptions& options, const TuneHooks& hooks) {
  if (options.screen_race_margin != 0 &&
      (options.screen_race_margin < options.screen_margin || options.screen_race_after < 1)) {
    throw std::invalid_argument(
        "tune_bucket: racing needs screen_race_margin >= screen_margin and screen_race_after >= 1 "
        "(or screen_race_margin 0: no racing)");
  }
  if (options.screen_first_cut_margin != 0 &&
      (options.screen_first_cut_margin < options.screen_race_margin ||
       options.screen_first_cut_margin < options.screen_margin)) {
    throw std::invalid_argument(
        "tune_bucket: the first cut needs screen_first_cut_margin >= screen_race_margin and >= "
        "screen_margin (or 0: no first cut)");
  }
  if (options.screen_first_cut_margin < 0) {
    throw std::invalid_argument("tune_bucket: screen_first_cut_margin must be >= 0");
  }
  if (options.confirm_blocks < 1 || options.pairs_per_block < 1 || options.screen_samples < 1 ||
      options.select_rounds < 1 || options.finalists < 1 || options.stage_time_samples < 1 ||
      options.control_remeasures < 0 || options.screen_warmup_replays < 0 ||
      options.screen_repeats < 0) {
    throw std::invalid_argument(
        "tune_bucket: protocol counts must be positive (screen warm-ups and repeats: >= 0)");
  }
  return BucketRun(bucket, sampler, options, hooks).run();
}

}  // namespace moetune::tune
