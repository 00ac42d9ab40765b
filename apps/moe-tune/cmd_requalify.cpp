// `moe-tune requalify TABLE.csv`: run the confirmation protocol again for the rows of an
// existing tuned table on the device and toolchain in hand, and say which rows still beat the
// default, which no longer do, and which kernels no longer compile (the third seed's review
// asked exactly this after a compiler upgrade). Each row's pair goes through the very protocol
// `tune` uses (tune_bucket on a plan with that fixed pair), on the GPU or, with --replay, on
// a replay model (never a measurement). The table itself is never modified.
#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "apps/moe-tune/code_provenance.hpp"
#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/device_selection.hpp"
#include "apps/moe-tune/isolation_options.hpp"
#include "apps/moe-tune/measurement_options.hpp"
#include "apps/moe-tune/repository_paths.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/core/sha256.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/jit/embedded_kernels.hpp"
#include "autotune/measure/gpu_sampler.hpp"
#include "autotune/measure/replay_sampler.hpp"
#include "autotune/tune/protocol_run.hpp"
#include "autotune/tune/requalify.hpp"
#include "autotune/tune/shard_plan.hpp"
#include "autotune/tune/tune_plan.hpp"
#include "autotune/tune/tune_report.hpp"

namespace moetune::app {

namespace {

struct RequalifyOptions : MeasurementOptions {
  std::string table;
  std::string arch;  // default: the GPU's, or sm_90 with --replay
  std::string replay;
  std::string report_dir;
  std::string markdown;  // -o: default <report dir>/requalify.md
  unsigned jobs = 0;
  DeviceOptions devices;        // --devices: the rows shared among GPUs
  IsolationOptions isolation;   // as tune: a worker process on a GPU unless --no-isolate
};

void run_requalify(const RequalifyOptions& opt, int& exit_code) {
  bool const replaying = !opt.replay.empty();
  auto const table_path = std::filesystem::path(opt.table);
  auto const table = io::read_fmoe_table(table_path);
  if (!io::is_tuned(table.kind())) {
    throw Error(fmt::format("{}: a {} table, not a tuned one: nothing to requalify",
                            table_path.string(), io::to_string(table.kind())));
  }

  // The machine in hand (or the replayed one): its arch and CU count decide which rows apply.
  auto const gpu_state =
      replaying ? gpu::GpuAvailability{false, "not probed (--replay)", 0} : gpu::probe_gpu();
  if (!replaying && !gpu_state.available) {
    throw Error(fmt::format("requalify measures on a GPU and there is none usable ({}); "
                            "--replay MODEL.json runs the protocol on a replay model instead",
                            gpu_state.reason));
  }
  std::unique_ptr<gpu::Device> device;
  if (!replaying) device = std::make_unique<gpu::Device>(0);
  std::string const arch_name =
      !opt.arch.empty() ? opt.arch : (device ? device->info().arch : std::string("sm_90"));
  auto const arch = search::parse_arch(arch_name);

  measure::ReplayModel model;
  std::int64_t cu_num = device ? device->info().compute_units : 132;
  std::filesystem::path model_path;
  if (replaying) {
    model_path = locate(opt.replay);
    auto loaded = measure::read_replay_model(model_path);
    model = std::move(loaded.model);
    cu_num = loaded.cu_num.value_or(cu_num);
  }

  // A replay never writes where measurements are looked for.
  auto const stem = table_path.stem().string();
  std::filesystem::path const report_dir =
      !opt.report_dir.empty() ? std::filesystem::path(opt.report_dir)
      : replaying             ? std::filesystem::path(stem + "_requalify_replay")
                              : std::filesystem::path("results") / arch_name / (stem + "_requalify");
  std::filesystem::create_directories(report_dir);

  std::vector<tune::RequalifyRow> rows;
  for (auto const& row : table.rows()) {
    rows.push_back({tune::requalify_case(row, arch, arch_name, cu_num), {}});
  }

  // Compile every unit the re-checked rows need, as `tune` does (cached, parallel): a kernel
  // that no longer compiles with this toolchain is a verdict, not a crash.
  tune::TunePlan checked;
  checked.arch = arch;
  for (auto const& r : rows) {
    if (r.row.plan) checked.buckets.push_back(*r.row.plan);
  }
  auto const sources = tune::plan_sources(checked);
  jit::CompileOptions compile_options;
  compile_options.arch = arch_name;
  compile_options.jobs = opt.jobs;
  compile_options.cache_dir = opt.cache_dir;
  auto const compiled = jit::compile_all(sources, compile_options);
  std::map<std::string, std::string> compile_errors;  // unit -> log head
  for (auto const& o : compiled.outcomes) {
    if (o.status != jit::CompileStatus::ok) compile_errors[o.unit_name] = o.log_head;
  }

  exec::UnitCompiler compiler(arch, opt.cache_dir);
  auto prov = code_provenance(compiler);
  prov.arch = arch_name;
  prov.cu_num = cu_num;
  prov.sampler = replaying ? "replay" : "gpu";
  prov.device = device ? device->info().name : "replay of " + model_path.string();
  prov.driver = device ? device->info().driver_version : "none (replay)";
  prov.launches = !device ? "none (replay)" : device->info().early_start_launches ? "overlapped" : "serial";

  // With --devices one worker per GPU (or replay worker); else one sampler, in a worker
  // process behind a watchdog (the default on a GPU, as in `tune`) or in this process.
  DeviceWorkers workers;
  auto const worker_args = replaying ? replay_worker_args(model_path) : gpu_worker_args(arch, opt);
  if (opt.devices.several()) {
    workers = replaying ? replay_workers(opt.devices, opt.isolation, model_path, model)
                        : gpu_workers(opt.devices, gpu_state.device_count, *device, opt.isolation,
                                      worker_args);
    fmt::print("devices: {} worker(s): {}\n", workers.workers.size(), fmt::join(workers.names(), ", "));
  } else if (opt.isolation.isolated(!replaying)) {
    workers = DeviceWorkers::one(isolated_sampler(opt.isolation, worker_args));
  } else if (replaying) {
    workers = DeviceWorkers::one(std::make_unique<measure::ReplaySampler>(std::move(model)));
  } else {
    auto const so = in_process_sampler_options(opt, opt.isolation);
    workers = DeviceWorkers::one(std::make_unique<measure::GpuSampler>(*device, arch, compiler, so));
  }
  tune::ProtocolOptions protocol;
  protocol.seed = opt.seed;

  fmt::print("requalify: {} ({} rows) on {} ({} CUs){}\n", table_path.string(), rows.size(),
             prov.device, cu_num, replaying ? ", replayed samples (not a measurement)" : "");
  // Skipped rows and kernels that no longer compile have their verdict without a GPU; the
  // rest are measured, one whole row per worker at a time (largest first with --devices).
  std::vector<std::size_t> measured;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& r = rows[i];
    if (!r.row.plan) {
      fmt::print("  line {}: skipped: {}\n", r.row.line, r.row.skip_reason);
      continue;
    }
    auto const& b = *r.row.plan;
    std::string failed_unit;
    for (auto const* cfg : {&b.candidates[0].config, &b.candidates[1].config, &b.baseline.stage1,
                            &b.baseline.stage2}) {
      if (failed_unit.empty() && compile_errors.contains(cfg->name())) failed_unit = cfg->name();
    }
    if (!failed_unit.empty()) {
      r.result = tune::compile_failure(failed_unit, compile_errors.at(failed_unit));
      fmt::print("  line {}: {}: {}\n", r.row.line, to_string(r.result.verdict), r.result.detail);
    } else {
      measured.push_back(i);
    }
  }
  if (workers.workers.size() > 1) {
    std::stable_sort(measured.begin(), measured.end(), [&](std::size_t a, std::size_t b) {
      return tune::bucket_cost(*rows[a].row.plan) > tune::bucket_cost(*rows[b].row.plan);
    });
  }
  std::mutex console;
  tune::run_on_workers(measured, workers.workers.size(), [&](std::size_t i, std::size_t w) {
    auto& r = rows[i];
    auto const& b = *r.row.plan;
    auto const& worker = workers.workers[w];
    // With several workers a row's lines are printed together once it is decided.
    bool const buffered = workers.workers.size() > 1;
    std::string log;
    auto hooks = tune::bucket_hooks(report_dir, b.line, std::nullopt);
    if (buffered) hooks.log = [&log](std::string_view text) { log += fmt::format("  {}\n", text); };
    auto const head = fmt::format("\n{}line {}: token {} at M={}: {} + {}\n",
                                  buffered ? fmt::format("[{}] ", worker.device) : "", b.line,
                                  b.key.token, b.M, b.fixed_pair->stage1.name(),
                                  b.fixed_pair->stage2.name());
    if (!buffered) fmt::print("{}", head);
    // The manifest declared before the first confirmation sample, as in `tune` (without the
    // decision code's digest, which requalify.json's provenance states once).
    auto result = tune::requalify_verdict(tune::tune_bucket(b, *worker.sampler, protocol, hooks));
    result.device = worker.device;
    std::lock_guard<std::mutex> guard(console);
    r.result = std::move(result);
    if (buffered) fmt::print("{}{}", head, log);
    fmt::print("  line {}: {}: {}\n", r.row.line, to_string(r.result.verdict), r.result.detail);
  });

  auto report = tune::tune_report_json({}, protocol, prov);
  report.erase("buckets");
  report["table"] = table_path.string();
  report["table_sha256"] = sha256_hex(read_file(table_path));
  report["rows"] = tune::requalify_json(rows);
  auto const json_path = report_dir / "requalify.json";
  write_file_atomically(json_path, report.dump(2) + "\n");
  auto const md = tune::requalify_markdown(
      rows, fmt::format("moe-tune requalify: {} on {}{}", table_path.filename().string(),
                        prov.device, replaying ? " (replayed samples, not a measurement)" : ""));
  auto const md_path =
      opt.markdown.empty() ? report_dir / "requalify.md" : std::filesystem::path(opt.markdown);
  write_file_atomically(md_path, md);
  fmt::print("\n{}\nreport: {} and {}\n", md, json_path.string(), md_path.string());

  // Non-zero when any row of ours no longer earns its place: a CI job after a toolchain
  // upgrade fails on exactly that.
  exit_code = 0;
  for (auto const& r : rows) {
    if (r.result.verdict != tune::RequalifyVerdict::still_qualifies &&
        r.result.verdict != tune::RequalifyVerdict::skipped) {
      exit_code = 1;
    }
  }
}

}  // namespace

void add_requalify_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<RequalifyOptions>();
  auto* cmd = app.add_subcommand(
      "requalify",
      "Check the rows of a tuned table again on this device and toolchain: which still beat "
      "the default, which no longer do, which no longer compile (see docs/tuning.md)");
  cmd->add_option("table", opt->table, "Tuned table (AITER fMoE schema)")->required();
  cmd->add_option("--arch", opt->arch, "Arch (default: the GPU's; sm_90 with --replay)");
  cmd->add_option("--replay", opt->replay,
                  "Run the protocol on samples from this replay model instead of a GPU "
                  "(never a measurement)");
  cmd->add_option("--report", opt->report_dir,
                  "Directory for requalify.json, requalify.md and the manifests (default "
                  "results/<arch>/<table stem>_requalify/, with --replay "
                  "./<table stem>_requalify_replay/)");
  cmd->add_option("-o,--output", opt->markdown, "Markdown report (default <report>/requalify.md)");
  cmd->add_option("-j,--jobs", opt->jobs, "Compiler threads (0 = all cores)");
  opt->add_measurement_options(*cmd, "Seed of weights, inputs and block order");
  opt->devices.add_device_options(*cmd, "rows");
  add_isolation_options(*cmd, opt->isolation);
  cmd->callback([opt, &exit_code] { run_requalify(*opt, exit_code); });
}

}  // namespace moetune::app
