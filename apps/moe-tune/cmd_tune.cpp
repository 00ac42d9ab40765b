// `moe-tune tune`: the tuning pipeline. This version runs the stages that need no GPU —
// read and check the untuned list, plan every bucket's candidates (with the rule that pruned
// each invalid one), compile them all through the cache — and says plainly what it did not
// run. Without a GPU that is everything possible; the measurement stages (verify, screen,
// select, confirm with control, gate, emit) are being built (see docs/tuning.md).
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
#include "autotune/tune/tune_plan.hpp"

namespace moetune::app {

namespace {

struct TuneOptions {
  std::string input = "shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv";
  std::string space;   // default search_spaces/<arch>.json
  std::string arch;    // default: the GPU's, or sm_90 without one
  unsigned jobs = 0;
  std::string cache_dir;
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
  fmt::print(
      "\nGPU found, but this version of moe-tune does not yet verify, time or qualify "
      "candidates (the confirmation protocol is being built; docs/tuning.md). No tuned rows "
      "were written.\n");
  exit_code = 1;
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
  cmd->callback([opt, &exit_code] { run_tune(*opt, exit_code); });
}

}  // namespace moetune::app
