// `moe-tune tune`: the tuning pipeline (DESIGN.md §1). Check the untuned list, plan every
// bucket's candidates (each invalid one with the rule that pruned it), compile them all
// through the cache; then, on a GPU of the planned arch, run the qualification protocol per
// bucket (verify, screen, select, declare the manifest, confirm with the identical-kernel
// control, gate) and write only qualified rows, with a JSON report and a Markdown summary.
// Without a GPU it stops after compiling and says so.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "apps/moe-tune/commands.hpp"
#include "autotune/core/error.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/validate.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/search/search_space.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/sha256.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/jit/embedded_kernels.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/gpu_sampler.hpp"
#include "autotune/tune/markdown_summary.hpp"
#include "autotune/tune/tune_plan.hpp"
#include "autotune/tune/tune_report.hpp"
#include "autotune/tune/tuned_rows.hpp"

namespace moetune::app {

namespace {

struct TuneOptions {
  std::string input = "shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv";
  std::string space;   // default search_spaces/<arch>.json
  std::string arch;    // default: the GPU's, or sm_90 without one
  unsigned jobs = 0;
  std::string cache_dir;
  std::string output;      // default results/<arch>/<list stem, untuned -> tuned>.csv
  std::string report_dir;  // default results/<arch>/<list stem>/
  std::string routing = "uniform";
  bool hot = false;
  std::uint64_t seed = 1;
};

// Defaults name files of the repository; let them work from any directory.
std::filesystem::path locate(const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative() && !std::filesystem::exists(p)) {
    auto const in_source = std::filesystem::path(MOETUNE_SOURCE_DIR) / p;
    if (std::filesystem::exists(in_source)) return in_source;
  }
  return p;
}

std::string stem_of(const std::filesystem::path& list) {
  auto stem = list.stem().string();
  if (auto pos = stem.find("untuned"); pos != std::string::npos) stem.replace(pos, 7, "tuned");
  return stem;
}

tune::Provenance provenance_for(const gpu::Device& device, const exec::UnitCompiler& compiler,
                                const std::filesystem::path& space_path) {
  tune::Provenance p;
  p.device = device.info().name;
  p.arch = device.info().arch;
  p.cu_num = device.info().compute_units;
  p.driver = device.info().driver_version;
  p.runtime_compiler = compiler.compiler().identity();
  p.git_revision = MOETUNE_GIT_REVISION;
  p.command = command_line();
  p.search_space = space_path.string();
  p.search_space_sha256 = sha256_hex(read_file(space_path));
  for (auto const& f : jit::embedded_kernel_files()) p.kernel_source_sha256[f.name] = sha256_hex(f.text);
  p.sampler = "gpu";
  return p;
}

// The qualification protocol over every planned bucket, on the GPU in hand.
void run_protocol(const TuneOptions& opt, const gpu::Device& device, search::Arch arch,
                  const std::filesystem::path& space_path, const std::filesystem::path& input,
                  const tune::TunePlan& plan, int& exit_code) {
  auto const stem = stem_of(input);
  std::filesystem::path const results = std::filesystem::path("results") / device.info().arch;
  std::filesystem::path const output =
      opt.output.empty() ? results / (stem + ".csv") : std::filesystem::path(opt.output);
  std::filesystem::path const report_dir =
      opt.report_dir.empty() ? results / stem : std::filesystem::path(opt.report_dir);
  std::filesystem::create_directories(report_dir);
  if (output.has_parent_path()) std::filesystem::create_directories(output.parent_path());

  exec::UnitCompiler compiler(arch, opt.cache_dir);
  tune::GpuSamplerOptions sampler_options;
  sampler_options.hot = opt.hot;
  sampler_options.routing = moe::parse_routing_spec(opt.routing);
  sampler_options.weight_seed = opt.seed;
  tune::GpuSampler sampler(device, arch, compiler, sampler_options);
  tune::ProtocolOptions protocol;
  protocol.seed = opt.seed;
  auto const provenance = provenance_for(device, compiler, space_path);

  std::vector<tune::BucketResult> results_so_far;
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    auto const& bucket = plan.buckets[i];
    fmt::print("\n[{}/{}] bucket token={} at M={} (line {})\n", i + 1, plan.buckets.size(),
               bucket.key.token, bucket.M, bucket.line);
    tune::TuneHooks hooks;
    hooks.on_manifest = [&](const tune::Manifest& manifest) {
      // Declared, and on disk, before the first confirmation sample.
      write_file_atomically(report_dir / fmt::format("manifest_line{}.json", bucket.line),
                            tune::to_json(manifest).dump(2) + "\n");
    };
    hooks.log = [](std::string_view line) { fmt::print("  {}\n", line); };
    results_so_far.push_back(tune::tune_bucket(bucket, sampler, protocol, hooks));
    fmt::print("  => {}\n", results_so_far.back().summary);
    // Reports are rewritten after every bucket, so an interrupted run keeps what it decided.
    tune::write_tune_report(report_dir / "report.json", results_so_far, protocol, provenance);
    tune::write_markdown_summary(report_dir / "summary.md", results_so_far, protocol, provenance);
  }
  auto const rows = tune::tuned_rows(results_so_far, {device.info().arch, device.info().compute_units});
  auto const written = tune::write_tuned_rows(output, rows);
  fmt::print("\n{} of {} buckets qualified; {} rows written to {}; report {}\n", rows.size(),
             plan.buckets.size(), written, written ? output.string() : "(nothing)",
             (report_dir / "report.json").string());
  exit_code = 0;
}

void run_tune(const TuneOptions& opt, int& exit_code) {
  auto const gpu_state = gpu::probe_gpu();
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

  // 2. Plan.
  auto const plan = tune::make_tune_plan(untuned, space, arch);
  fmt::print("tune: {} ({} rows) on {} with {}\n", input.string(), untuned.rows().size(),
             arch_name, space_path.string());
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
  for (auto const& o : compiled.outcomes) {
    if (o.status != jit::CompileStatus::ok) {
      fmt::print("  compile_error: {}\n{}\n", o.unit_name, o.log_head);
    }
  }

  // 4. Measurement needs a GPU of the planned arch.
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
  run_protocol(opt, device, arch, space_path, input, plan, exit_code);
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<TuneOptions>();
  auto* cmd = app.add_subcommand(
      "tune", "Tune an untuned shape list into qualified AITER tuned rows (see docs/tuning.md)");
  cmd->add_option("-i,--input", opt->input, "Untuned shape list (AITER fMoE schema)")
      ->capture_default_str();
  cmd->add_option("--space", opt->space, "Search space (default search_spaces/<arch>.json)");
  cmd->add_option("--arch", opt->arch,
                  "Target arch (default: the GPU's; sm_90 when there is no GPU)");
  cmd->add_option("-j,--jobs", opt->jobs, "Compiler threads (0 = all cores)");
  cmd->add_option("--cache-dir", opt->cache_dir, "Code cache directory");
  cmd->add_option("-o,--output", opt->output,
                  "Tuned CSV to write (default results/<arch>/<list name, untuned -> tuned>.csv); "
                  "only qualified rows are written");
  cmd->add_option("--report", opt->report_dir,
                  "Directory for report.json, summary.md and the manifests "
                  "(default results/<arch>/<list name>/)");
  cmd->add_option("--routing", opt->routing,
                  "Timing routing: uniform, round_robin, concentrated, zipf:S, file:PATH")
      ->capture_default_str();
  cmd->add_flag("--hot", opt->hot, "Do not rotate weight copies (weights may stay in L2)");
  cmd->add_option("--seed", opt->seed, "Seed of weights, inputs and block order")
      ->capture_default_str();
  cmd->callback([opt, &exit_code] { run_tune(*opt, exit_code); });
}

}  // namespace moetune::app
