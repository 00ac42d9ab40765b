// `moe-tune verify --space FILE`: run every valid variant of a search space through all the
// correctness gates on the GPU (DESIGN.md §2). Each stage-one variant is paired with the
// default stage two of its block_m, and each stage-two variant with the default stage one.
// Exit 1 if any valid variant fails a gate; pruned variants are listed with their rule.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/shape_options.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/exec/verifier.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/search_space.hpp"
#include "autotune/search/validity.hpp"

namespace moetune::app {
namespace {

struct VerifyCommandOptions {
  ShapeOptions shape;
  std::string space;
  std::int64_t m = 8;
  std::uint64_t seed = 1;
  std::string cache_dir;
  std::string json_path;
};

// The partner of a variant in the other stage: the default configuration made to read the
// variant's sort (search::with_sort_of: both stages read the same sorted blocks), or the first
// valid candidate that reads it.
std::optional<search::KernelConfig> partner(const search::KernelConfig& variant,
                                            const search::KernelConfig& default_other,
                                            const std::vector<search::Candidate>& candidates,
                                            search::Arch arch, const moe::MoeShape& shape) {
  auto const other = search::with_sort_of(default_other, variant);
  if (!search::check_config(other, arch, shape)) return other;
  for (auto const& c : candidates) {
    if (!c.pruned_reason && c.config.stage == other.stage && !search::pair_violation_either(c.config, variant)) {
      return c.config;
    }
  }
  return std::nullopt;
}

std::optional<std::string> spill_reason(const jit::CompileOutcome& outcome) {
  for (auto const& k : outcome.result.kernels) {
    if (k.resources.spill_bytes > 0 || k.resources.scratch_bytes > 0) {
      return fmt::format("compiled with {} B of register spills ({} B scratch) per thread",
                         k.resources.spill_bytes, k.resources.scratch_bytes);
    }
  }
  return std::nullopt;
}

void run_verify(const VerifyCommandOptions& opt, int& exit_code) {
  auto const probe = gpu::probe_gpu();
  if (!probe.available) {
    fmt::print("verify needs a GPU: {}\n", probe.reason);
    exit_code = 1;
    return;
  }
  gpu::Device device(0);
  auto const arch = search::parse_arch(device.info().arch);
  auto const space = search::load_search_space(opt.space);
  exec::UnitCompiler compiler(arch, opt.cache_dir);
  nlohmann::json out = nlohmann::json::array();
  std::size_t failures = 0, passes = 0, pruned = 0;
  // The JSON is rewritten (atomically) after every variant, so a sweep that is stopped part
  // way keeps everything it decided.
  auto const save = [&] {
    if (opt.json_path.empty()) return;
    nlohmann::json doc{{"device", device.info().name}, {"arch", device.info().arch},
                       {"space", opt.space}, {"bucket_m", opt.m}, {"complete", false},
                       {"variants", out}};
    write_file_atomically(opt.json_path, doc.dump(2) + "\n");
  };

  for (auto const& shape : opt.shape.shapes_for(arch)) {
    fmt::print("\n== {} on {}: H={} I={} E={} topk={}, bucket M={}\n", moe::to_string(shape.dtype),
               device.info().name, shape.hidden, shape.inter, shape.experts, shape.topk, opt.m);
    exec::Verifier verifier(device, compiler, shape, opt.seed);
    auto const candidates = search::enumerate(space, arch, shape);
    auto const defaults = search::default_config(shape, arch, opt.m);
    exec::VerifyOptions options;
    options.bucket_ms = {opt.m};
    std::map<std::string, exec::VerifyReport> done;
    for (auto const& c : candidates) {
      if (c.pruned_reason) {
        ++pruned;
        fmt::print("  pruned  {}: {}\n", c.config.name(), *c.pruned_reason);
        out.push_back({{"variant", c.config.name()}, {"outcome", "pruned"}, {"rule", *c.pruned_reason}});
        continue;
      }
      // A unit that spills registers is a slow tile the register rule missed: pruned after
      // compiling, with the compiler's figure as the reason.
      if (auto const spill = spill_reason(compiler.compile(c.config))) {
        ++pruned;
        fmt::print("  pruned  {}: {}\n", c.config.name(), *spill);
        out.push_back({{"variant", c.config.name()}, {"outcome", "pruned"}, {"rule", *spill}});
        continue;
      }
      auto const other = partner(c.config, c.config.stage == 1 ? defaults.stage2 : defaults.stage1,
                                 candidates, arch, shape);
      if (!other) {
        ++failures;
        fmt::print("  FAIL    {}: no valid partner stage reading its sort of {} tokens a block\n", c.config.name(),
                   search::sort_block_m(c.config));
        out.push_back({{"variant", c.config.name()}, {"outcome", "no_partner"}});
        continue;
      }
      auto const& s1 = c.config.stage == 1 ? c.config : *other;
      auto const& s2 = c.config.stage == 1 ? *other : c.config;
      auto const key = s1.name() + "+" + s2.name();
      auto it = done.find(key);
      if (it == done.end()) it = done.emplace(key, verifier.verify(s1, s2, options)).first;
      auto const& report = it->second;
      bool const ok = report.passed();
      ok ? ++passes : ++failures;
      auto const* fail = report.first_failure();
      fmt::print("  {}  {} ({} checks, max_abs {:.2e}, max_rel {:.2e}){}\n", ok ? "pass" : "FAIL",
                 c.config.name(), report.checks.size(), report.worst_max_abs, report.worst_max_rel,
                 fail ? fmt::format("\n          {}: {}", fail->name, fail->detail) : "");
      nlohmann::json checks = nlohmann::json::array();
      for (auto const& check : report.checks) {
        checks.push_back({{"name", check.name}, {"passed", check.passed}, {"detail", check.detail},
                          {"max_abs", check.max_abs}, {"max_rel", check.max_rel},
                          {"seconds", check.seconds}});
      }
      out.push_back({{"variant", c.config.name()}, {"partner", other->name()},
                     {"dtype", std::string(moe::to_string(shape.dtype))},
                     {"outcome", ok ? "passed" : "wrong_result"}, {"checks", checks}});
      save();
    }
  }
  fmt::print("\nverify: {} variants passed every gate, {} failed, {} pruned\n", passes, failures,
             pruned);
  if (!opt.json_path.empty()) {
    nlohmann::json doc{{"device", device.info().name}, {"arch", device.info().arch},
                       {"space", opt.space}, {"bucket_m", opt.m}, {"complete", true},
                       {"variants", out}};
    write_file_atomically(opt.json_path, doc.dump(2) + "\n");
  }
  exit_code = failures == 0 ? 0 : 1;
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<VerifyCommandOptions>();
  auto* cmd = app.add_subcommand(
      "verify", "Run every valid variant of a search space through all correctness gates on the "
                "GPU (boundary M, routing modes, NaN-sentinel coverage, input preservation, "
                "changed-input graph replay)");
  cmd->add_option("--space", opt->space, "Search space JSON")->required();
  opt->shape.add_to(*cmd);
  cmd->add_option("--m", opt->m, "The bucket's own M (checked besides the boundaries)")
      ->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Workload seed")->capture_default_str();
  cmd->add_option("--cache-dir", opt->cache_dir, "Code cache directory");
  cmd->add_option("--json", opt->json_path, "Also write every check as JSON");
  cmd->callback([opt, &exit_code] { run_verify(*opt, exit_code); });
}

}  // namespace moetune::app
