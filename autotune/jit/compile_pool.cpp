#include "autotune/jit/compile_pool.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "autotune/core/error.hpp"
#include "autotune/core/thread_pool.hpp"
#include "autotune/jit/machine_code_digest.hpp"

namespace moetune::jit {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

constexpr int log_head_lines = 4;

}  // namespace

std::string_view to_string(CompileStatus status) {
  return status == CompileStatus::ok ? "ok" : "compile_error";
}

std::size_t CompileReport::count(CompileStatus status) const {
  return static_cast<std::size_t>(std::count_if(
      outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.status == status; }));
}

std::size_t CompileReport::cache_hits() const {
  return static_cast<std::size_t>(
      std::count_if(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.cache_hit; }));
}

CompileOutcome compile_unit(const Compiler& compiler, const CodeCache* cache,
                            const KernelSource& source) {
  auto const start = clock_type::now();
  CompileOutcome outcome;
  outcome.unit_name = source.unit_name;
  outcome.primary_kernel = source.primary_kernel;
  try {
    outcome.key = cache_key(compiler, source);
    if (cache != nullptr) {
      if (auto hit = cache->load(outcome.key, compiler.arch())) {
        outcome.result = std::move(*hit);
        outcome.cache_hit = true;
      }
    }
    if (!outcome.cache_hit) {
      outcome.result = compiler.compile(source);
      if (cache != nullptr && outcome.result.ok) {
        try {
          cache->store(outcome.key, compiler.arch(), source.unit_name, outcome.result);
        } catch (const Error& error) {
          // A full or read-only cache costs speed, not the candidate.
          spdlog::warn("code cache: {}", error.what());
        }
      }
    }
  } catch (const std::exception& error) {
    outcome.result = CompileResult{};
    outcome.result.log = fmt::format("moe-tune: {} compiler failed: {}", compiler.kind(),
                                     error.what());
  }
  outcome.status = outcome.result.ok ? CompileStatus::ok : CompileStatus::compile_error;
  outcome.code_digest = machine_code_digest(outcome.result);
  if (!outcome.result.ok) outcome.log_head = detail::first_lines(outcome.result.log, log_head_lines);
  outcome.elapsed_ms = ms_since(start);
  return outcome;
}

CompileReport compile_all(std::span<const KernelSource> sources, const CompileOptions& options) {
  auto const start = clock_type::now();
  CompilerConfig config{options.arch, options.headers, options.extra_options};
  std::unique_ptr<Compiler> const compiler = make_compiler(config);
  std::optional<CodeCache> cache;
  if (options.use_cache) {
    cache.emplace(options.cache_dir.empty() ? default_cache_dir() : options.cache_dir);
  }

  CompileReport report;
  report.arch = options.arch;
  report.compiler = compiler->identity();
  report.jobs = effective_jobs(options.jobs);
  report.outcomes.resize(sources.size());
  // Each worker writes only its own slot: results line up with inputs without locking.
  parallel_for(sources.size(), report.jobs, [&](std::size_t i) {
    report.outcomes[i] = compile_unit(*compiler, cache ? &*cache : nullptr, sources[i]);
  });
  report.elapsed_ms = ms_since(start);
  return report;
}

std::string format_compile_table(const CompileReport& report, const std::vector<TableColumn>& extra) {
  // One row per unit. regs and smem/LDS are the unit's primary kernel, the variant's own tile:
  // a stage-two unit also holds moe_reduce_y, whose 84 registers (sm_90) hid every stage-two
  // tile's count when the row showed the largest figure (and a stage one's sort comes before
  // its tile). Spill and scratch are the largest of any kernel: a spill anywhere in the unit is
  // worth seeing.
  auto const own = [](const CompileOutcome& o, int ResourceUsage::*field) -> std::string {
    auto const& k = o.result.kernels;
    int const v = o.primary_kernel < k.size() ? k[o.primary_kernel].resources.*field : -1;
    return v < 0 ? "-" : std::to_string(v);
  };
  auto const largest = [](const CompileOutcome& o, int ResourceUsage::*field) -> std::string {
    int best = -1;
    for (auto const& kernel : o.result.kernels) best = std::max(best, kernel.resources.*field);
    return best < 0 ? "-" : std::to_string(best);
  };
  std::size_t name_width = 7;
  for (auto const& o : report.outcomes) name_width = std::max(name_width, o.unit_name.size());

  // Extra columns sit between spill/scratch and ms, each as wide as its widest entry.
  std::vector<std::size_t> widths;
  for (auto const& column : extra) {
    std::size_t w = column.header.size();
    for (auto const& v : column.values) w = std::max(w, v.size());
    widths.push_back(w);
  }
  auto const extra_cells = [&](std::size_t row) {
    std::string cells;
    for (std::size_t c = 0; c < extra.size(); ++c) {
      auto const& values = extra[c].values;
      cells += fmt::format("  {:>{}}", row == SIZE_MAX ? extra[c].header : row < values.size() ? values[row] : "",
                           widths[c]);
    }
    return cells;
  };
  std::string out = fmt::format("{:<{}}  {:<13}  {:>5}  {:>9}  {:>13}{}  {:>9}  {}\n", "variant",
                                name_width, "outcome", "regs", "smem/LDS", "spill/scratch",
                                extra_cells(SIZE_MAX), "ms", "cache");
  for (std::size_t row = 0; row < report.outcomes.size(); ++row) {
    auto const& o = report.outcomes[row];
    std::string const spill = o.status == CompileStatus::ok
                                  ? largest(o, &ResourceUsage::spill_bytes) + "/" +
                                        largest(o, &ResourceUsage::scratch_bytes)
                                  : "-";
    out += fmt::format("{:<{}}  {:<13}  {:>5}  {:>9}  {:>13}{}  {:>9.1f}  {}\n", o.unit_name,
                       name_width, to_string(o.status), own(o, &ResourceUsage::registers),
                       own(o, &ResourceUsage::shared_bytes), spill, extra_cells(row), o.elapsed_ms,
                       o.cache_hit ? "hit" : "miss");
  }
  for (auto const& o : report.outcomes) {
    if (o.status == CompileStatus::ok) continue;
    out += fmt::format("\n{}:\n{}\n", o.unit_name, o.log_head);
  }
  out += fmt::format("\n{} of {} compiled for {} ({}), {} from cache, {} jobs, {:.1f} s\n",
                     report.count(CompileStatus::ok), report.outcomes.size(), report.arch,
                     report.compiler, report.cache_hits(), report.jobs,
                     report.elapsed_ms / 1000.0);
  return out;
}

}  // namespace moetune::jit
