// `moe-tune tune`: the tuning pipeline (DESIGN.md §1). Check the untuned list, plan every
// bucket's candidates (each invalid one with the rule that pruned it), compile them all
// through the cache; then, on a GPU of the planned arch, run the qualification protocol per
// bucket (verify, screen, select, declare the manifest, confirm with the identical-kernel
// control, gate) and write only qualified rows, with a JSON report and a Markdown summary.
// Without a GPU it stops after compiling and says so — unless `--replay MODEL.json`: then a
// ReplaySampler (synthetic samples from that model) drives the very same protocol loop, so CI
// exercises planning, gating, outcomes and emission end to end. A replayed run is never a
// measurement: its provenance says "replay", its rows carry `_tag` = replay, it needs an
// explicit -o and never writes under results/ (replay_outputs.hpp).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "apps/moe-tune/code_provenance.hpp"
#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/device_selection.hpp"
#include "apps/moe-tune/measurement_options.hpp"
#include "apps/moe-tune/isolation_options.hpp"
#include "apps/moe-tune/replay_outputs.hpp"
#include "apps/moe-tune/repository_paths.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/core/sha256.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/validate.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/jit/embedded_kernels.hpp"
#include "autotune/search/search_space.hpp"
#include "autotune/tune/calibration_record.hpp"
#include "autotune/tune/code_twins.hpp"
#include "autotune/measure/gpu_sampler.hpp"
#include "autotune/measure/replay_sampler.hpp"
#include "autotune/tune/protocol_run.hpp"
#include "autotune/tune/shard_merge.hpp"
#include "autotune/tune/shard_plan.hpp"
#include "autotune/tune/tune_plan.hpp"

namespace moetune::app {

namespace {

struct TuneOptions : MeasurementOptions {
  std::string input = "shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv";
  std::string space;   // default search_spaces/<arch>.json
  std::string arch;    // default: the GPU's, or sm_90 without one
  unsigned jobs = 0;
  std::string output;      // default results/<arch>/<list stem, untuned -> tuned>.csv
  std::string report_dir;  // default results/<arch>/<list stem>/
  std::string replay;  // replay model JSON: simulate the GPU (never a measurement)
  bool resume = false;   // continue the journal of an interrupted run
  std::string journal;   // default <report dir>/journal.jsonl
  IsolationOptions isolation;  // worker process + watchdog (default on for a GPU run)
  std::string calibration;     // `moe-tune calibrate --json` output whose rate the report states
  bool exhaustive_screen = false;  // no racing: every candidate gets all its screen samples
  bool no_futility_stop = false;   // every confirmation block measured (ProtocolOptions)
  std::string shard;               // "K/N" or "auto": tune only this shard's buckets
  DeviceOptions devices;           // --devices: one isolated worker per GPU
};

// The protocol switches of the command line. The exhaustive screen is the slowest, most
// thorough one (#15's reference): every candidate gets every screen sample, each of the
// sampler's full R launches.
void apply_protocol_flags(const TuneOptions& opt, tune::ProtocolOptions& protocol) {
  if (opt.exhaustive_screen) {
    protocol.screen_race_margin = 0;
    protocol.screen_first_cut_margin = 0;
    protocol.screen_repeats = 0;
  }
  if (opt.no_futility_stop) protocol.futility_stop = false;
}

// The shard this run tunes (tune::ShardSpec), resolved once the list is planned.
struct ShardRun {
  tune::ShardSpec spec;
  std::vector<std::int64_t> lines;  // the list lines of its buckets
};

std::string stem_of(const std::filesystem::path& list, const std::optional<ShardRun>& shard) {
  auto stem = list.stem().string();
  if (auto pos = stem.find("untuned"); pos != std::string::npos) stem.replace(pos, 7, "tuned");
  // Each shard's default outputs are its own: <stem>_shard<K>of<N>(.csv, /).
  if (shard) stem += fmt::format("_shard{}of{}", shard->spec.index + 1, shard->spec.count);
  return stem;
}

// The journal of this run and what, besides the provenance, a resumed run must match: the
// input list (path and content), the timing workload and, for a replay, the model's content.
tune::JournalSettings journal_settings(const TuneOptions& opt, const std::optional<ShardRun>& shard) {
  tune::JournalSettings j;
  j.file = opt.journal;
  j.resume = opt.resume;
  auto const input = locate(opt.input);
  j.identity["input"] = input.string();
  j.identity["input_sha256"] = sha256_hex(read_file(input));
  j.identity["routing"] = opt.routing;
  j.identity["hot"] = opt.hot ? "true" : "false";
  if (!opt.replay.empty()) {
    j.identity["replay_model_sha256"] = measure::replay_model_identity_digest(locate(opt.replay));
  }
  if (shard) {
    // A shard's journal is its own (a resumed shard must be the same shard of the same
    // partition); `merge-shards` drops these two fields to join the shards into one run.
    j.identity[std::string(tune::kShardField)] = shard->spec.label();
    std::string lines;
    for (auto const l : shard->lines) lines += (lines.empty() ? "" : ",") + std::to_string(l);
    j.identity[std::string(tune::kShardLinesField)] = lines;
  }
  return j;
}

// A bucket that could not be tuned outranks a unit that did not compile (a candidate's
// failure, recorded as its outcome; still exit 1, as before): see `tune --help`.
int run_exit_code(const tune::ProtocolTotals& totals, std::size_t failed_compiles) {
  if (int const code = totals.exit_code(); code != 0) return code;
  return failed_compiles == 0 ? 0 : 1;
}

// What a run depends on besides the machine: the same for a measurement and a replay.
tune::Provenance common_provenance(const exec::UnitCompiler& compiler,
                                   const std::filesystem::path& space_path) {
  auto p = code_provenance(compiler);
  p.search_space = space_path.string();
  p.search_space_sha256 = sha256_hex(read_file(space_path));
  return p;
}

// --calibration FILE: the rate it measured, stated for the one bucket it was measured on;
// refused when its design, device, routing or --hot differ, or when it fits no bucket.
void state_calibration(const TuneOptions& opt, const tune::TunePlan& plan,
                       const tune::CalibrationContext& context, tune::ProtocolOptions& protocol) {
  if (opt.calibration.empty()) return;
  auto const record = tune::read_calibration(opt.calibration, protocol, context);
  tune::check_calibration_applies(record, plan);
  tune::apply_calibration(record, protocol);
}

// A measurement on the GPU in hand: defaults under results/<arch>/.
tune::ProtocolTotals measure(const TuneOptions& opt, const gpu::Device& device, int device_count, search::Arch arch,
             const std::filesystem::path& space_path, const std::filesystem::path& input,
             const tune::TunePlan& plan, const tune::CompileStep& compile,
             const std::optional<ShardRun>& shard) {
  auto const stem = stem_of(input, shard);
  std::filesystem::path const results = std::filesystem::path("results") / device.info().arch;
  tune::ProtocolRun run;
  run.compile = compile;
  run.output = opt.output.empty() ? results / (stem + ".csv") : std::filesystem::path(opt.output);
  run.report_dir = opt.report_dir.empty() ? results / stem : std::filesystem::path(opt.report_dir);
  exec::UnitCompiler compiler(arch, opt.cache_dir);
  run.protocol.seed = opt.seed;
  apply_protocol_flags(opt, run.protocol);
  state_calibration(opt, plan, {device.info().arch, device.info().name, opt.routing, opt.hot, false},
                    run.protocol);
  run.provenance = common_provenance(compiler, space_path);
  run.provenance.device = device.info().name;
  run.provenance.arch = device.info().arch;
  run.provenance.cu_num = device.info().compute_units;
  run.provenance.driver = device.info().driver_version;
  run.provenance.launches = device.info().early_start_launches ? "overlapped" : "serial";
  run.provenance.sampler = "gpu";
  run.rows = {device.info().arch, device.info().compute_units};

  run.journal = journal_settings(opt, shard);
  auto args = gpu_worker_args(arch, opt);
  if (opt.devices.several()) {
    // One isolated worker per GPU; each bucket is measured wholly by one of them.
    auto const w = gpu_workers(opt.devices, device_count, device, opt.isolation, args);
    fmt::print("devices: {} GPU(s), one worker each\n", w.workers.size());
    return tune::run_protocol(plan, w.workers, run);
  }
  if (opt.isolation.isolated(true)) {
    // Every GPU call runs in a worker process behind a watchdog: a candidate that faults or
    // hangs costs that candidate, and the run goes on with a fresh worker.
    auto sampler = isolated_sampler(opt.isolation, std::move(args));
    return tune::run_protocol(plan, *sampler, run);
  }
  auto const sampler_options = in_process_sampler_options(opt, opt.isolation);
  measure::GpuSampler sampler(device, arch, compiler, sampler_options);
  return tune::run_protocol(plan, sampler, run);
}

// A replay's reports: next to its explicit -o unless --report names them.
std::filesystem::path replay_report_dir(const TuneOptions& opt) {
  std::filesystem::path const output(opt.output);
  return opt.report_dir.empty() ? output.parent_path() / (output.stem().string() + "_replay_report")
                                : std::filesystem::path(opt.report_dir);
}

// A replay: samples from the model, outputs next to the explicit -o, never under results/.
tune::ProtocolTotals replay(const TuneOptions& opt, const std::string& arch_name, search::Arch arch,
            const std::filesystem::path& space_path, const tune::TunePlan& plan,
            const tune::CompileStep& compile, const std::optional<ShardRun>& shard) {
  auto const model_path = locate(opt.replay);
  auto loaded = measure::read_replay_model(model_path);
  auto model = std::move(loaded.model);
  // The rows need a positive cu_num to be valid AITER rows; the model may name the machine it
  // simulates, else 132 (the SM count of H100/H200 SXM, the sm_90 parts we tune for).
  std::int64_t const cu_num = loaded.cu_num.value_or(132);
  tune::ProtocolRun run;
  run.compile = compile;
  run.output = opt.output;
  run.report_dir = replay_report_dir(opt);
  run.protocol.seed = opt.seed;
  apply_protocol_flags(opt, run.protocol);
  state_calibration(opt, plan, {arch_name, "", opt.routing, opt.hot, true}, run.protocol);
  // Nothing is compiled here (the replay's prepare is the model's); the compiler identity
  // still goes into the provenance, as the compile step above used it.
  run.provenance = common_provenance(exec::UnitCompiler(arch, opt.cache_dir), space_path);
  run.provenance.device = "replay of " + model_path.string();
  run.provenance.arch = arch_name;
  if (cu_num <= 0) throw Error(fmt::format("{}: cu_num must be positive", model_path.string()));
  run.provenance.cu_num = cu_num;
  run.provenance.driver = "none (replay)";
  run.provenance.launches = "none (replay)";
  run.provenance.sampler = "replay";
  // Tagged, so a replayed row never shares a key with a measured one: it can neither replace
  // nor withdraw a measurement in the same table.
  run.rows = {arch_name, run.provenance.cu_num, "replay"};

  run.journal = journal_settings(opt, shard);
  if (opt.devices.several()) {
    auto const w = replay_workers(opt.devices, opt.isolation, model_path, model);
    fmt::print("devices: {} replay worker(s)\n", w.workers.size());
    return tune::run_protocol(plan, w.workers, run);
  }
  if (opt.isolation.isolated(false)) {
    // The GPU run's isolation without a GPU: the worker replays the same model, and a model's
    // crash_pairs / hang_pairs really kill or stall it.
    auto sampler = isolated_sampler(opt.isolation,
                                    replay_worker_args(model_path));
    return tune::run_protocol(plan, *sampler, run);
  }
  measure::ReplaySampler sampler(std::move(model));
  return tune::run_protocol(plan, sampler, run);
}

void run_tune(const TuneOptions& opt, int& exit_code) {
  bool const replaying = !opt.replay.empty();
  if (replaying && opt.output.empty()) {
    // Simulated rows must never land where measured ones are looked for by default.
    throw CLI::ValidationError(
        "--replay", "a replayed run writes simulated rows, never a measurement: name its "
                    "output explicitly with -o FILE (nothing under results/ is written)");
  }
  if (replaying) {
    // Checked before the list is read or anything compiled: a refused replay writes nothing.
    refuse_outputs_inside({{"-o", opt.output},
                           {"--report", replay_report_dir(opt)},
                           {"--journal", opt.journal}},
                          measurement_directories());
    require_tag_column(opt.output);
  }
  // A replay needs no GPU, so none is probed: its arch is the one asked for, else sm_90.
  auto const gpu_state =
      replaying ? gpu::GpuAvailability{false, "not probed (--replay)", 0} : gpu::probe_gpu();
  std::string arch_name = opt.arch;
  if (arch_name.empty()) {
    if (gpu_state.available) {
      arch_name = gpu::Device(0).info().arch;
    } else {
      arch_name = "sm_90";
    }
  }
  auto const arch = search::parse_arch(arch_name);
  auto const input = locate(opt.input);
  auto const space_path = locate(opt.space.empty() ? "search_spaces/" + arch_name + ".json" : opt.space);

  // 1. Read and check the list: a bad list stops the run before anything is compiled.
  auto const report = io::validate_files({input});
  if (report.exit_code() != 0) {
    io::print_report(report, stderr);
    throw Error(fmt::format("{}: the untuned list has errors; nothing was tuned", input.string()));
  }
  auto const untuned = io::read_fmoe_table(input);
  auto const space = search::load_search_space(space_path);

  // 2. Plan (and, with --shard, keep this shard's buckets).
  auto plan = tune::make_tune_plan(untuned, space, arch);
  fmt::print("tune: {} ({} rows) on {} with {}\n", input.string(), untuned.rows().size(),
             arch_name, space_path.string());
  std::optional<ShardRun> shard;
  if (!opt.shard.empty()) {
    tune::ShardSpec spec;
    try {
      spec = tune::parse_shard(opt.shard, tune::process_environment());
    } catch (const Error& e) {
      throw CLI::ValidationError("--shard", e.what());  // a usage error: exit 2
    }
    std::size_t const all = plan.buckets.size();
    auto const partition = tune::restrict_to_shard(plan, spec);
    double total = 0;
    for (auto c : partition.cost) total += c;
    ShardRun run{spec, {}};
    for (auto const& b : plan.buckets) run.lines.push_back(b.line);
    fmt::print("shard {} (from {}): {} of {} buckets, estimated {:.0f} % of the list's tuning work "
               "(the largest shard {:.0f} %)\n",
               spec.label(), spec.source, plan.buckets.size(), all,
               total > 0 ? 100 * partition.cost[static_cast<std::size_t>(spec.index)] / total : 0.0,
               total > 0 ? 100 * *std::max_element(partition.cost.begin(), partition.cost.end()) / total : 0.0);
    shard = std::move(run);
  }
  for (auto const& s : plan.skipped) {
    fmt::print("  line {}: skipped: {}\n", s.line, s.reason);
  }
  for (auto const& b : plan.buckets) {
    std::size_t pruned = 0;
    for (auto const& c : b.candidates) pruned += c.pruned_reason ? 1 : 0;
    fmt::print("  line {}: token {} at M={} E={} topk={} H={} I={} {}: {} candidates ({} pruned), "
               "baseline {} + {}\n",
               b.line, b.key.token, b.M, b.shape.experts, b.shape.topk, b.shape.hidden,
               b.shape.inter, moe::to_string(b.shape.dtype), b.candidates.size(), pruned,
               b.baseline.stage1.name(), b.baseline.stage2.name());
  }

  // 3. Compile every distinct unit (cached, parallel, apart from the GPU).
  auto const sources = tune::plan_sources(plan);
  jit::CompileOptions options;
  options.arch = arch_name;
  options.jobs = opt.jobs;
  options.cache_dir = opt.cache_dir;
  fmt::print("compiling {} distinct kernel units for {}...\n", sources.size(), arch_name);
  auto const compiled = jit::compile_all(sources, options);
  auto const failed = compiled.count(jit::CompileStatus::compile_error);
  fmt::print("compiled: {} ok, {} failed, {} from cache, {:.1f} s\n",
             compiled.count(jit::CompileStatus::ok), failed, compiled.cache_hits(),
             compiled.elapsed_ms / 1000.0);
  tune::CompileStep const compile_step{sources.size(), compiled.cache_hits(), failed,
                                       compiled.elapsed_ms / 1000.0};
  for (auto const& o : compiled.outcomes) {
    if (o.status != jit::CompileStatus::ok) {
      fmt::print("  compile_error: {}\n{}\n", o.unit_name, o.log_head);
    }
  }
  if (replaying) {
    // A replay model names pipelines, not code: deduplicating by code would change which
    // pipelines it is asked about.
    fmt::print("code twins: not looked for in a replay (its pipelines have no machine code); "
               "candidates are told apart by name only\n");
  } else {
    tune::attach_code_digests(plan, tune::code_digests_of(compiled));
    auto const twins = tune::count_code_twins(plan);
    fmt::print("code twins: {} candidate(s) removed: {} with the baseline's machine code, {} "
               "with an earlier pipeline's (timed once)\n",
               twins.total(), twins.baseline_twins, twins.pipeline_twins);
  }

  // 4. Replay, or measurement on a GPU of the planned arch.
  if (replaying) {
    auto const totals = replay(opt, arch_name, arch, space_path, plan, compile_step, shard);
    exit_code = run_exit_code(totals, failed);
    return;
  }
  if (!gpu_state.available) {
    fmt::print(
        "\nno usable GPU: {}.\nDone without one: the list was checked, {} buckets planned ({} "
        "candidates, {} pruned), {} units compiled for {}. Verification, timing and the gate "
        "need a GPU; no tuned rows were written.\n",
        gpu_state.reason, plan.buckets.size(), plan.candidate_count(), plan.pruned_count(),
        sources.size(), arch_name);
    exit_code = failed == 0 ? 0 : 1;
    return;
  }
  gpu::Device device(0);
  if (device.info().arch != arch_name && !(arch_name == "sm_90a" && device.info().arch == "sm_90")) {
    throw Error(fmt::format("planned for {} but the GPU is {} ({}): timing needs the planned arch",
                            arch_name, device.info().name, device.info().arch));
  }
  exit_code = run_exit_code(measure(opt, device, gpu_state.device_count, arch, space_path, input, plan, compile_step, shard), failed);
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<TuneOptions>();
  auto* cmd = app.add_subcommand(
      "tune", "Tune an untuned shape list into qualified AITER tuned rows (see docs/tuning.md)");
  cmd->footer(fmt::format(
      "Exit codes: 0 every bucket decided; 1 a unit failed to compile (its candidates are "
      "compile_error); 2 bad input or usage; 3 a GPU, compiler or system failure that stopped "
      "the run; {} a bucket's baseline (default configuration) failed to build, verify or "
      "time, so its candidates are baseline_failed and nothing was tuned there; {} a bucket "
      "could not be set up (weights, worker, memory): it is not journaled and `tune --resume` "
      "measures it again. For {} and {} every other bucket was measured and its rows written; "
      "summary.md names the failed buckets.",
      tune::kExitBaselineFailed, tune::kExitSetupFailed, tune::kExitBaselineFailed, tune::kExitSetupFailed));
  cmd->add_option("-i,--input", opt->input, "Untuned shape list (AITER fMoE schema)")
      ->capture_default_str();
  cmd->add_option("--space", opt->space, "Search space (default search_spaces/<arch>.json)");
  cmd->add_option("--arch", opt->arch,
                  "Target arch (default: the GPU's; sm_90 when there is no GPU)");
  cmd->add_option("-j,--jobs", opt->jobs, "Compiler threads (0 = all cores)");
  cmd->add_option("-o,--output", opt->output,
                  "Tuned CSV to write (default results/<arch>/<list name, untuned -> tuned>.csv); "
                  "only qualified rows are written");
  cmd->add_option("--report", opt->report_dir,
                  "Directory for report.json, summary.md and the manifests "
                  "(default results/<arch>/<list name>/)");
  cmd->add_option("--replay", opt->replay,
                  "Run the protocol without a GPU on samples from this replay model (JSON, see "
                  "docs/tuning.md); needs -o, reports go to <-o stem>_replay_report/ unless "
                  "--report; a replayed run is never a measurement");
  cmd->add_option("--calibration", opt->calibration,
                  "State the false-qualification rate that `moe-tune calibrate --json FILE` measured "
                  "for this design and arch (refused, naming the fields, if the design differs)");
  cmd->add_flag("--resume", opt->resume,
                "Continue an interrupted run from its journal: decided buckets are not "
                "measured again; a journal of a different run (device, toolchain, space, "
                "kernels, decision code, list, gate, protocol) is refused");
  cmd->add_option("--journal", opt->journal,
                  "Journal of decided buckets (default <report dir>/journal.jsonl)");
  cmd->add_option("--shard", opt->shard,
                  "Tune only shard K of N of the list's buckets (K/N, K from 1; or 'auto': "
                  "MOETUNE_SHARD, a Slurm array task or a Kubernetes Indexed Job, docs/scale-out.md). "
                  "The partition is deterministic and cost-balanced; each shard writes its own "
                  "table, report and journal (default names end in _shard<K>of<N>); "
                  "`moe-tune merge-shards` joins them");
  cmd->add_flag("--exhaustive-screen", opt->exhaustive_screen,
                "Screen without racing or first cut, every sample at the full launch count: every "
                "candidate gets all its screen samples (slower; to check that the fast screen "
                "decides alike, docs/tuning.md)");
  cmd->add_flag("--no-futility-stop", opt->no_futility_stop,
                "Measure every confirmation block, even once the gate can no longer pass");
  opt->devices.add_device_options(*cmd, "buckets");
  add_isolation_options(*cmd, opt->isolation);
  opt->add_measurement_options(*cmd, "Seed of weights, inputs and block order");
  cmd->callback([opt, &exit_code] { run_tune(*opt, exit_code); });
}

}  // namespace moetune::app
