// `moe-tune calibrate`: measures, on the device in hand, what the qualification protocol is
// worth (DESIGN.md §4, item 3): the false-qualification rate of the full confirmation design
// (the baseline against a separately built copy of itself, fresh placement per block, control
// and gate exactly as tune runs them) and its power against known slowdowns of the baseline,
// each with an exact 95 % interval, and a verdict against the targets. Without a GPU it needs
// `--replay MODEL.json` (synthetic samples, for CI), which is never a measurement.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/device_selection.hpp"
#include "apps/moe-tune/isolation_options.hpp"
#include "apps/moe-tune/measurement_options.hpp"
#include "apps/moe-tune/shape_options.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/tune/calibration.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "autotune/measure/gpu_sampler.hpp"
#include "autotune/measure/replay_sampler.hpp"

namespace moetune::app {
namespace {

struct CalibrateOptions : MeasurementOptions {
  ShapeOptions shape;
  // Backbone M = 8: where same-kernel placement differences were largest on the H200
  // (up to 3.7 %, ../shared/docs/FACTS.md), so the worst case for false qualification.
  std::int64_t M = 8;
  std::string config = "default";
  int trials = 400;
  int power_trials = 100;
  std::vector<double> slowdowns_percent{1, 2, 3, 5};
  int blocks = 0;           // 0: tune's default
  int pairs_per_block = 0;  // 0: tune's default
  double min_gain_percent = -1;  // <0: tune's default gate threshold
  int control_remeasures = -1;   // <0: tune's default
  bool no_futility_stop = false;  // calibrate the design without tune's futility stop
  int reference_samples = 15;
  std::string json_path;
  std::string replay;
  std::string arch = "sm_90";  // replay only: the arch the shape and baseline are planned for
  double target_false_percent = 1;
  double target_power_percent = 95;
  double target_power_slowdown_percent = 2;
  DeviceOptions devices;       // --devices: the trials shared among GPUs
  IsolationOptions isolation;  // as tune: a worker process on a GPU unless --no-isolate
};

measure::BucketPlan make_bucket(const CalibrateOptions& opt, search::Arch arch) {
  if (opt.shape.dtypes.size() != 1) {
    throw Error("calibrate: give exactly one --dtype (the baseline of one shape is calibrated)");
  }
  if (opt.M < 1) throw Error("calibrate: --m must be positive");
  measure::BucketPlan b;
  b.shape = opt.shape.shapes_for(arch).at(0);
  b.shape.tokens = opt.M;
  b.M = opt.M;
  b.key.token = opt.M;
  b.key.model_dim = b.shape.hidden;
  b.key.inter_dim = b.shape.inter;
  b.key.expert = b.shape.experts;
  b.key.topk = b.shape.topk;
  if (opt.config == "default") {
    b.baseline = search::default_config(b.shape, arch, opt.M);
  } else {
    auto const comma = opt.config.find(',');
    if (comma == std::string::npos) {
      throw Error(fmt::format("--config '{}': expected 'default' or 'STAGE1_NAME,STAGE2_NAME'",
                              opt.config));
    }
    b.baseline = {search::parse_kernel_name(opt.config.substr(0, comma)),
                  search::parse_kernel_name(opt.config.substr(comma + 1))};
  }
  return b;
}

tune::CalibrationOptions calibration_options(const CalibrateOptions& opt) {
  tune::CalibrationOptions c;
  auto& p = c.protocol;
  p.seed = opt.seed;
  if (opt.blocks > 0) p.confirm_blocks = opt.blocks;
  if (opt.pairs_per_block > 0) p.pairs_per_block = opt.pairs_per_block;
  if (opt.min_gain_percent >= 0) p.gate.min_median_reduction = opt.min_gain_percent / 100;
  if (opt.control_remeasures >= 0) p.control_remeasures = opt.control_remeasures;
  if (opt.no_futility_stop) p.futility_stop = false;
  c.null_trials = opt.trials;
  c.power_trials = opt.power_trials;
  c.slowdowns.clear();
  for (double s : opt.slowdowns_percent) c.slowdowns.push_back(s / 100);
  c.reference_samples = opt.reference_samples;
  return c;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string progress_line(int done, int rounds, const tune::CalibrationResult& r) {
  std::string line = fmt::format("trial {}/{}:", done, rounds);
  for (auto const& c : r.cases) {
    line += fmt::format(" {} {}/{} ({})", c.name, c.qualified(), c.trials.size(),
                        percent(c.rate()));
  }
  if (!r.cases.empty() && !r.cases.front().trials.empty()) {
    line += fmt::format(", {:.1f} s per trial", r.cases.front().trials.back().seconds);
  }
  return line;
}

void print_table(const tune::CalibrationResult& r) {
  fmt::print("\n{:<14} {:>6} {:>9} {:>7} {:>17} {:>16} {:>12} {:>11}\n", "case", "trials",
             "qualified", "rate", "95% CI", "control failed", "median gain", "delay ns");
  for (auto const& c : r.cases) {
    auto const ci = c.interval();
    fmt::print("{:<14} {:>6} {:>9} {:>7} {:>17} {:>16} {:>+11.3f}% {:>11}\n", c.name,
               c.trials.size(), c.qualified(), percent(c.rate()),
               fmt::format("[{}, {}]", percent(ci.lower), percent(ci.upper)),
               fmt::format("{} ({} of {})", c.control_failed_trials(), c.control_failed_attempts(),
                           c.attempts()),
               100 * c.median_gain(), c.delay_ns ? fmt::format("{}", *c.delay_ns) : "-");
  }
  fmt::print(
      "qualified = gate and control passed in the last attempt of tune's design, futility stop "
      "included (what tune writes a row for); "
      "control failed = trials whose final control failed in the design without the stop "
      "(attempts that failed, of all attempts); median gain = median over trials of the median paired reduction.\n");
  if (!r.cases.empty() && r.futility_stop) {
    // Every trial measured every block; the futility stop's verdicts and cost come from the
    // same samples.
    fmt::print("\nfutility stop (tune's design), derived from the same trials:\n");
    fmt::print("{:<14} {:>9} {:>22} {:>24}\n", "case", "stopped", "qualified without stop",
               "pairs per trial: stop/all");
    for (auto const& c : r.cases) {
      fmt::print("{:<14} {:>9} {:>22} {:>24}\n", c.name, c.futility_stops(),
                 fmt::format("{} (with stop: {})", c.qualified_without_futility_stop(), c.qualified()),
                 fmt::format("{:.1f} / {:.1f}", c.mean_pairs_with_futility_stop(),
                             c.mean_pairs_measured()));
    }
  }
}

// The null distribution (or a slowdown's), as printed and as the JSON holds it.
void print_distribution(const tune::CalibrationCase& c, int required_wins) {
  auto const d = c.distribution(required_wins);
  if (d.pairs == 0) return;
  std::string hist;
  for (std::size_t w = 0; w < d.wins_histogram.size(); ++w) {
    if (d.wins_histogram[w] > 0) hist += fmt::format(" {}:{}", w, d.wins_histogram[w]);
  }
  fmt::print("{}: wins of {} per trial (wins:trials){}; mean {:.2f} (fair null {:g}); {} trial(s) "
             "at >= {} wins; {} with a positive median\n",
             c.name, d.pairs, hist, d.mean_wins, d.pairs / 2.0, d.trials_at_required_wins,
             required_wins, d.trials_with_positive_median);
  fmt::print("{}: median paired reduction over trials: min {:+.3f}%, 5% {:+.3f}%, 25% {:+.3f}%, "
             "50% {:+.3f}%, 75% {:+.3f}%, 95% {:+.3f}%, max {:+.3f}%\n",
             c.name, 100 * d.median_quantiles[0], 100 * d.median_quantiles[1],
             100 * d.median_quantiles[2], 100 * d.median_quantiles[3],
             100 * d.median_quantiles[4], 100 * d.median_quantiles[5],
             100 * d.median_quantiles[6]);
}

nlohmann::json to_json(const tune::TrialDistribution& d) {
  return {{"pairs", d.pairs},
          {"wins_histogram", d.wins_histogram},
          {"mean_wins", d.mean_wins},
          {"trials_at_required_wins", d.trials_at_required_wins},
          {"trials_with_positive_median", d.trials_with_positive_median},
          {"median_quantiles",
           {{"levels", {0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0}}, {"values", d.median_quantiles}}}};
}

// Every sample of a trial's last attempt with its order: what an order or position effect
// would be read from.
nlohmann::json rounds_json(const std::vector<tune::ConfirmRound>& rounds) {
  nlohmann::json out = nlohmann::json::array();
  for (auto const& r : rounds) {
    out.push_back({r.block, tune::describe(r.order), r.baseline_us, r.candidate_us, r.control_us});
  }
  return out;
}

nlohmann::json to_json(const tune::CalibrationResult& r, const tune::CalibrationOptions& o,
                       const tune::TargetVerdict& verdict, nlohmann::json machine,
                       const measure::BucketPlan& bucket) {
  nlohmann::json cases = nlohmann::json::array();
  for (auto const& c : r.cases) {
    nlohmann::json trials = nlohmann::json::array();
    for (auto const& t : c.trials) {
      trials.push_back({{"index", t.index}, {"attempts", t.attempts},
                        {"control_failures", t.control_failures},
                        {"median_reduction", t.median_reduction}, {"wins", t.wins},
                        {"pairs", t.pairs}, {"block_median_reductions", t.block_median_reductions},
                        {"control_median_reduction", t.control_median_reduction},
                        {"control_wins", t.control_wins},
                        {"versus_control_median_reduction", t.versus_control_median_reduction},
                        {"versus_control_wins", t.versus_control_wins},
                        {"rounds", rounds_json(t.rounds)},
                        {"gate_passed", t.gate_passed}, {"control_passed", t.control_passed},
                        {"qualified", t.qualified},
                        {"qualified_without_futility_stop", t.qualified_without_futility_stop},
                        {"futility_stop_attempt", t.futility_stop_attempt
                                                      ? nlohmann::json(*t.futility_stop_attempt)
                                                      : nlohmann::json()},
                        {"futility_stop_after_blocks", t.futility_stop_after_blocks},
                        {"pairs_with_futility_stop", t.pairs_with_futility_stop},
                        {"pairs_measured", t.pairs_measured},
                        {"first_block_seeds", t.first_block_seeds},
                        {"seconds", t.seconds}});
      if (!t.device.empty()) trials.back()["device"] = t.device;
    }
    auto const ci = c.interval();
    cases.push_back({{"name", c.name}, {"slowdown", c.slowdown},
                     {"delay_ns", c.delay_ns ? nlohmann::json(*c.delay_ns) : nlohmann::json()},
                     {"trials", c.trials.size()}, {"qualified", c.qualified()},
                     {"qualified_without_futility_stop", c.qualified_without_futility_stop()},
                     {"futility_stops", c.futility_stops()},
                     {"mean_pairs_with_futility_stop", c.mean_pairs_with_futility_stop()},
                     {"mean_pairs_measured", c.mean_pairs_measured()},
                     {"rate", c.rate()}, {"ci95", {ci.lower, ci.upper}},
                     {"control_failed_trials", c.control_failed_trials()},
                     {"control_failed_attempts", c.control_failed_attempts()},
                     {"attempts", c.attempts()}, {"median_gain", c.median_gain()},
                     {"distribution", to_json(c.distribution(r.required_wins))},
                     {"trial_results", trials}});
  }
  auto const& p = o.protocol;
  return {{"machine", std::move(machine)},
          {"command", command_line()},
          {"baseline", r.baseline.name()},
          {"workload",
           {{"hidden", bucket.shape.hidden}, {"inter", bucket.shape.inter},
            {"experts", bucket.shape.experts}, {"topk", bucket.shape.topk},
            {"dtype", moe::to_string(bucket.shape.dtype)}, {"M", bucket.M}}},
          {"reference_median_us", r.reference_median_us},
          {"reference_samples_us", r.reference_samples_us},
          {"protocol",
           {{"confirm_blocks", p.confirm_blocks}, {"pairs_per_block", p.pairs_per_block},
            {"control_remeasures", p.control_remeasures}, {"futility_stop", p.futility_stop},
            {"min_median_reduction", p.gate.min_median_reduction},
            {"required_wins", r.required_wins}, {"require_every_block", p.gate.require_every_block},
            {"control_fraction", p.gate.control_fraction}, {"block_share", p.gate.block_share},
            {"order_design", tune::kConfirmationOrderDesign}, {"seed", p.seed}}},
          {"cases", cases},
          {"targets_met", verdict.met()},
          {"verdict", verdict.lines},
          {"seconds", r.seconds}};
}

void run_calibrate(const CalibrateOptions& opt, int& exit_code) {
  bool const replaying = !opt.replay.empty();
  std::optional<gpu::Device> device;
  int device_count = 0;
  if (!replaying) {
    auto const probe = gpu::probe_gpu();
    if (!probe.available) {
      fmt::print(stderr,
                 "calibrate needs a GPU: {}.\nIt measures the timing of the device in hand; "
                 "without one, only `--replay MODEL.json` (synthetic samples, never a "
                 "measurement) runs.\n",
                 probe.reason);
      exit_code = 3;
      return;
    }
    device.emplace(0);
    device_count = probe.device_count;
  }
  auto const arch = search::parse_arch(replaying ? opt.arch : device->info().arch);
  auto const bucket = make_bucket(opt, arch);
  auto const copt = calibration_options(opt);
  tune::CalibrationTargets targets;
  targets.max_false_rate = opt.target_false_percent / 100;
  targets.min_power = opt.target_power_percent / 100;
  targets.power_slowdown = opt.target_power_slowdown_percent / 100;

  nlohmann::json machine;
  DeviceWorkers workers;
  std::unique_ptr<exec::UnitCompiler> compiler;
  if (replaying) {
    auto model = measure::read_replay_model(opt.replay).model;
    machine = {{"device", "replay of " + opt.replay}, {"arch", opt.arch}, {"sampler", "replay"},
               {"routing", opt.routing}, {"hot", opt.hot}};
    if (opt.devices.several()) {
      workers = replay_workers(opt.devices, opt.isolation, opt.replay, model);
    } else if (opt.isolation.isolated(false)) {
      workers = DeviceWorkers::one(isolated_sampler(opt.isolation, replay_worker_args(opt.replay)));
    } else {
      workers = DeviceWorkers::one(std::make_unique<measure::ReplaySampler>(std::move(model)));
    }
    fmt::print("calibrate: REPLAY of {} (synthetic samples, not a measurement)\n", opt.replay);
  } else {
    compiler = std::make_unique<exec::UnitCompiler>(arch, opt.cache_dir);
    if (opt.devices.several()) {
      workers = gpu_workers(opt.devices, device_count, *device, opt.isolation, gpu_worker_args(arch, opt));
    } else if (opt.isolation.isolated(true)) {
      // As tune times: in a worker process behind a watchdog, unless --no-isolate.
      workers = DeviceWorkers::one(isolated_sampler(opt.isolation, gpu_worker_args(arch, opt)));
    } else {
      auto const so = in_process_sampler_options(opt, opt.isolation);
      workers = DeviceWorkers::one(std::make_unique<measure::GpuSampler>(*device, arch, *compiler, so));
    }
    machine = {{"device", device->info().name}, {"arch", device->info().arch},
               {"driver", device->info().driver_version},
               {"compiler", compiler->compiler().identity()}, {"sampler", "gpu"},
               {"routing", opt.routing}, {"hot", opt.hot},
               {"repeats", workers.samplers.front()->repeats()}};
    fmt::print("calibrate: {} ({})\n", device->info().name, device->info().arch);
  }
  if (opt.devices.several()) {
    auto const names = workers.names();
    machine["devices"] = names;
    fmt::print("devices: {} worker(s), each taking whole rounds (trial t of every case): {}\n",
               names.size(), fmt::join(names, ", "));
  }
  auto const& p = copt.protocol;
  fmt::print("shape H={} I={} E={} topk={} {} at M={}; baseline {}\n", bucket.shape.hidden,
             bucket.shape.inter, bucket.shape.experts, bucket.shape.topk,
             moe::to_string(bucket.shape.dtype), bucket.M, tune::baseline_pair(bucket).name());
  fmt::print("design: {} blocks x {} rounds (fresh inputs, weights, graphs and a random placement "
             "pad per block; build and sample order randomized and balanced, {}), up to {} "
             "re-measure(s) after a failed control; gate against the baseline and against the "
             "control: median >= {:.2f}% and wins >= {} of {}{}{}\n",
             p.confirm_blocks, p.pairs_per_block, tune::kConfirmationOrderDesign,
             p.control_remeasures, 100 * p.gate.min_median_reduction,
             stats::required_wins(p.gate, p.confirm_blocks * p.pairs_per_block),
             p.confirm_blocks * p.pairs_per_block,
             p.gate.require_every_block
                 ? fmt::format(" and every block median >= {:g} x threshold", p.gate.block_share)
                 : std::string(),
             p.futility_stop ? "; futility stop (every block is measured, the stop's verdicts "
                               "are derived from the same samples)"
                             : "");
  std::fflush(stdout);

  int const rounds = std::max(copt.null_trials, copt.slowdowns.empty() ? 0 : copt.power_trials);
  tune::CalibrationHooks hooks;
  hooks.log = [](std::string_view line) {
    fmt::print("{}\n", line);
    std::fflush(stdout);
  };
  hooks.on_round = [rounds](int done, const tune::CalibrationResult& r) {
    fmt::print("{}\n", progress_line(done, rounds, r));
    std::fflush(stdout);
  };
  auto const result = tune::calibrate(bucket, workers.workers, copt, hooks);
  print_table(result);
  for (auto const& c : result.cases) print_distribution(c, result.required_wins);
  auto const verdict = tune::judge_targets(result, targets);
  for (auto const& line : verdict.lines) fmt::print("{}\n", line);
  fmt::print("verdict: {} ({:.0f} s)\n", verdict.met() ? "targets met" : "targets NOT met",
             result.seconds);
  if (!opt.json_path.empty()) {
    write_file_atomically(opt.json_path,
                          to_json(result, copt, verdict, std::move(machine), bucket).dump(1) + "\n");
  }
  exit_code = verdict.met() ? 0 : 1;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<CalibrateOptions>();
  opt->shape.dtypes = {"a16w4"};
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure the confirmation design's false-qualification rate (the baseline against "
      "itself) and its power against known slowdowns, with 95% intervals (docs/tuning.md)");
  opt->shape.add_to(*cmd);
  cmd->add_option("--m", opt->M, "Tokens (actual M) of the timed workload")->capture_default_str();
  cmd->add_option("--config", opt->config,
                  "The baseline pair: 'default' (the runtime's heuristic) or "
                  "'STAGE1_NAME,STAGE2_NAME'")
      ->capture_default_str();
  cmd->add_option("--trials", opt->trials, "Trials of the null case (0: skip it)")
      ->capture_default_str();
  cmd->add_option("--power-trials", opt->power_trials, "Trials per slowdown (0: skip the slowdowns)")
      ->capture_default_str();
  cmd->add_option("--slowdowns", opt->slowdowns_percent,
                  "Known slowdowns of the baseline, in percent of its median time")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--blocks", opt->blocks, "Confirmation blocks (default: tune's)");
  cmd->add_option("--pairs-per-block", opt->pairs_per_block, "Pairs per block (default: tune's)");
  cmd->add_option("--min-gain", opt->min_gain_percent,
                  "Gate: minimum median paired reduction in percent (default: tune's)");
  cmd->add_option("--control-remeasures", opt->control_remeasures,
                  "Re-measures after a failed control (default: tune's)");
  cmd->add_flag("--no-futility-stop", opt->no_futility_stop,
                "Calibrate the design without tune's futility stop (tune --no-futility-stop)");
  cmd->add_option("--reference-samples", opt->reference_samples,
                  "Samples of the baseline that size the delays")
      ->capture_default_str();
  cmd->add_option("--json", opt->json_path, "Also write every trial as JSON");
  cmd->add_option("--replay", opt->replay,
                  "Run without a GPU on samples from this replay model (JSON, see "
                  "docs/tuning.md); never a measurement");
  cmd->add_option("--arch", opt->arch, "With --replay: the arch the baseline is planned for")
      ->capture_default_str();
  cmd->add_option("--target-false", opt->target_false_percent,
                  "Target: at most this false-qualification rate, percent")
      ->capture_default_str();
  cmd->add_option("--target-power", opt->target_power_percent,
                  "Target: at least this power, percent")
      ->capture_default_str();
  cmd->add_option("--target-power-at", opt->target_power_slowdown_percent,
                  "Target: the slowdown, percent, the power target applies to")
      ->capture_default_str();
  opt->add_measurement_options(*cmd, "Seed of weights, inputs and every trial's blocks");
  opt->devices.add_device_options(*cmd, "rounds of trials");
  add_isolation_options(*cmd, opt->isolation);
  cmd->callback([opt, &exit_code] { run_calibrate(*opt, exit_code); });
}

}  // namespace moetune::app
