// `moe-tune compile --arch ARCH --space FILE`: compile every valid candidate of a search space
// for one architecture, with no GPU needed. Invalid candidates are listed with the rule that
// pruned them; the exit status is 1 if any valid candidate fails to compile.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/shape_options.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/jit/ptxas_log.hpp"
#include "autotune/search/occupancy.hpp"
#include "autotune/search/render.hpp"
#include "autotune/search/search_space.hpp"

namespace moetune::app {

namespace {

struct CompileCommandOptions {
  std::string arch = "sm_90";
  std::string space;
  unsigned jobs = 0;
  std::string cache_dir;
  bool no_cache = false;
  ShapeOptions shape;
  std::string json_path;
  bool no_spills = false;
};

// Units whose kernels spill registers or use scratch: on every target a spilling tile is a
// slow tile, so the search space's register rules should have pruned it.
std::vector<std::string> spilling_units(const jit::CompileReport& report) {
  std::vector<std::string> names;
  for (auto const& o : report.outcomes) {
    for (auto const& k : o.result.kernels) {
      if (k.resources.spill_bytes > 0 || k.resources.scratch_bytes > 0) {
        names.push_back(fmt::format("{} ({}: spill {} B, scratch {} B)", o.unit_name,
                                    k.name_expression, k.resources.spill_bytes,
                                    k.resources.scratch_bytes));
        break;
      }
    }
  }
  return names;
}

// Kernels whose wgmmas ptxas serialised (its C751x warnings): "unit (kernel: C7512: reason)".
std::vector<std::string> serialized_wgmma_units(const jit::CompileReport& report) {
  std::vector<std::string> names;
  for (auto const& o : report.outcomes) {
    auto const found = jit::serialized_wgmma(o.result.log);
    for (auto const& k : o.result.kernels) {
      if (auto const it = found.find(k.lowered_name); it != found.end())
        names.push_back(fmt::format("{} ({}: {})", o.unit_name, k.name_expression, it->second));
    }
  }
  return names;
}

// Per compiled unit (report order): CTAs per SM of its tile on sm_90, from the registers ptxas
// gave its primary kernel and the LDS its configuration lays out (search/occupancy.hpp).
std::vector<std::optional<search::Occupancy>> occupancies(const jit::CompileReport& report,
                                                          const std::vector<search::KernelConfig>& configs,
                                                          search::Arch arch) {
  std::vector<std::optional<search::Occupancy>> out;
  for (std::size_t i = 0; i < report.outcomes.size(); ++i) {
    auto const& o = report.outcomes[i];
    auto const& k = o.result.kernels;
    if (o.status != jit::CompileStatus::ok || o.primary_kernel >= k.size() || i >= configs.size()) {
      out.emplace_back();
      continue;
    }
    auto const& r = k[o.primary_kernel].resources;
    out.push_back(search::sm90_occupancy(configs[i], arch, r.registers, r.shared_bytes));
  }
  return out;
}

nlohmann::json to_json(const jit::CompileReport& report,
                       const std::vector<search::Candidate>& pruned,
                       const std::vector<std::optional<search::Occupancy>>& occupancy) {
  nlohmann::json out;
  out["arch"] = report.arch;
  out["compiler"] = report.compiler;
  out["jobs"] = report.jobs;
  out["elapsed_ms"] = report.elapsed_ms;
  out["cache_hits"] = report.cache_hits();
  for (auto const& o : report.outcomes) {
    auto const serialized = jit::serialized_wgmma(o.result.log);
    nlohmann::json entry{{"variant", o.unit_name},
                         {"outcome", std::string(jit::to_string(o.status))},
                         {"cache_hit", o.cache_hit},
                         {"elapsed_ms", o.elapsed_ms},
                         {"key", o.key}};
    for (auto const& k : o.result.kernels) {
      entry["kernels"].push_back({{"name", k.name_expression},
                                  {"registers", k.resources.registers},
                                  {"shared_bytes", k.resources.shared_bytes},
                                  {"spill_bytes", k.resources.spill_bytes},
                                  {"scratch_bytes", k.resources.scratch_bytes}});
      if (auto const it = serialized.find(k.lowered_name); it != serialized.end())
        entry["kernels"].back()["wgmma_serialized"] = it->second;
    }
    if (o.status != jit::CompileStatus::ok) entry["log_head"] = o.log_head;
    if (auto const& occ = occupancy[&o - report.outcomes.data()]) {
      entry["ctas_per_sm"] = occ->ctas_per_sm;
      entry["ctas_per_sm_limited_by"] = occ->limited_by;
    }
    out["variants"].push_back(entry);
  }
  for (auto const& c : pruned) {
    out["pruned"].push_back({{"variant", c.config.name()}, {"rule", *c.pruned_reason}});
  }
  return out;
}

void run_compile(const CompileCommandOptions& opt, int& exit_code) {
  auto const arch = search::parse_arch(opt.arch);
  auto const space = search::load_search_space(opt.space);
  std::vector<search::Candidate> pruned;
  std::vector<jit::KernelSource> sources;
  std::vector<search::KernelConfig> configs;  // one per source
  for (auto const& shape : opt.shape.shapes_for(arch)) {
    for (auto& candidate : search::enumerate(space, arch, shape)) {
      if (candidate.pruned_reason) {
        pruned.push_back(std::move(candidate));
      } else {
        sources.push_back(search::render(candidate.config, arch));
        configs.push_back(candidate.config);
      }
    }
  }
  fmt::print("compiling {} candidates for {} from {} ({} pruned)\n", sources.size(), opt.arch,
             opt.space, pruned.size());

  jit::CompileOptions options;
  options.arch = opt.arch;
  options.jobs = opt.jobs;
  options.cache_dir = opt.cache_dir;
  options.use_cache = !opt.no_cache;
  auto const report = jit::compile_all(sources, options);

  auto const occupancy = occupancies(report, configs, arch);
  std::vector<jit::TableColumn> extra;
  if (arch == search::Arch::sm_90) {
    jit::TableColumn column{"CTAs/SM", {}};
    for (auto const& occ : occupancy) column.values.push_back(search::to_string(occ));
    extra.push_back(std::move(column));
  }
  std::fputs(jit::format_compile_table(report, extra).c_str(), stdout);
  if (!pruned.empty()) {
    fmt::print("\npruned (invalid for {}, not compiled):\n", opt.arch);
    for (auto const& c : pruned) fmt::print("  {}: {}\n", c.config.name(), *c.pruned_reason);
  }
  auto const failed = report.count(jit::CompileStatus::compile_error);
  double const seconds = report.elapsed_ms / 1000.0;
  fmt::print("\n{}: {} ok, {} failed, {} pruned; {} cache hits; {:.2f} s with {} jobs ({:.2f} "
             "variants/s)\n",
             opt.arch, report.count(jit::CompileStatus::ok), failed, pruned.size(),
             report.cache_hits(), seconds, report.jobs,
             seconds > 0 ? static_cast<double>(sources.size()) / seconds : 0.0);
  auto const spills = spilling_units(report);
  for (auto const& s : spills) fmt::print("spills: {}\n", s);
  // A warning, not a failure: such a kernel is correct, only slower than it could be.
  for (auto const& s : serialized_wgmma_units(report)) fmt::print("wgmma serialised by ptxas: {}\n", s);
  if (!opt.json_path.empty()) {
    write_file_atomically(opt.json_path, to_json(report, pruned, occupancy).dump(2) + "\n");
  }
  exit_code = failed == 0 && (spills.empty() || !opt.no_spills) ? 0 : 1;
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<CompileCommandOptions>();
  auto* cmd = app.add_subcommand(
      "compile",
      "Compile every valid candidate of a search space for one architecture (no GPU needed); "
      "prints registers, static shared/LDS and spill bytes per variant (its tile kernel), on sm_90 its CTAs per SM and "
      "what limits them, and names the kernels whose wgmmas "
      "ptxas serialised. Exit 1 if any fails (or, "
      "with --no-spills, spills)");
  cmd->add_option("--arch", opt->arch, "Target: sm_90, sm_90a, gfx90a, gfx942, gfx950")
      ->capture_default_str();
  cmd->add_option("--space", opt->space, "Search space JSON (search_spaces/*.json)")->required();
  cmd->add_option("-j,--jobs", opt->jobs, "Compiler threads (0 = all cores)")
      ->capture_default_str();
  cmd->add_option("--cache-dir", opt->cache_dir,
                  "Code cache directory (default $XDG_CACHE_HOME/moe-tune or ~/.cache/moe-tune)");
  cmd->add_flag("--no-cache", opt->no_cache, "Compile everything; read and write no cache");
  cmd->add_option("--json", opt->json_path, "Also write the report as JSON to this file");
  cmd->add_flag("--no-spills", opt->no_spills,
                "Fail (exit 1) when any kernel spills registers or uses scratch memory");
  opt->shape.add_to(*cmd);
  cmd->callback([opt, &exit_code] { run_compile(*opt, exit_code); });
}

}  // namespace moetune::app
