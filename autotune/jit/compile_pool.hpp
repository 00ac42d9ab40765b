#pragma once
// Compiles many candidates for one arch on a thread pool, apart from the GPU, through the code
// cache. This is what `moe-tune compile` and the tuner's compile stage call. A candidate that
// does not compile is an outcome with its log, never an exception.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "autotune/jit/code_cache.hpp"
#include "autotune/jit/compile_result.hpp"
#include "autotune/jit/compiler.hpp"
#include "autotune/jit/kernel_source.hpp"

namespace moetune::jit {

struct CompileOptions {
  std::string arch;                  // "sm_90", "gfx942", ...
  unsigned jobs = 0;                 // worker threads; 0 = hardware concurrency (--jobs N)
  std::filesystem::path cache_dir;   // empty = default_cache_dir()
  bool use_cache = true;
  // Headers visible to kernels; nullopt = the embedded kernels/ files.
  std::optional<std::vector<EmbeddedFile>> headers;
  std::vector<std::string> extra_options;  // appended to every compile (part of the key)
};

enum class CompileStatus { ok, compile_error };

[[nodiscard]] std::string_view to_string(CompileStatus status);

struct CompileOutcome {
  std::string unit_name;
  CompileStatus status = CompileStatus::compile_error;
  bool cache_hit = false;
  double elapsed_ms = 0.0;  // wall time for this candidate (lookup, compile, store)
  std::string key;          // cache key (also identifies the build in provenance)
  CompileResult result;     // image, lowered names and resources when ok; the log always
  std::string log_head;     // first lines of the log, for tables (empty when clean)
  std::size_t primary_kernel = 0;  // KernelSource::primary_kernel
  // What the unit executes (machine_code_digest.hpp): equal for units that differ by name
  // only. Empty when it did not compile.
  std::string code_digest;
};

struct CompileReport {
  std::string arch;
  std::string compiler;  // identity and version
  unsigned jobs = 0;
  double elapsed_ms = 0.0;
  std::vector<CompileOutcome> outcomes;  // one per input, in input order

  [[nodiscard]] std::size_t count(CompileStatus status) const;
  [[nodiscard]] std::size_t cache_hits() const;
};

// Compiles one unit through the cache (nullptr = no cache). Never throws for a compile error;
// a tool-chain failure (crash, missing tool mid-run) becomes compile_error with the message.
[[nodiscard]] CompileOutcome compile_unit(const Compiler& compiler, const CodeCache* cache,
                                          const KernelSource& source);

// Compiles every source on `options.jobs` threads. Throws Error before starting if the arch
// has no compiler or its compiler is not installed.
[[nodiscard]] CompileReport compile_all(std::span<const KernelSource> sources,
                                        const CompileOptions& options);

// A plain-text table: variant, outcome, regs and smem/LDS (of the unit's primary kernel, the
// variant's tile), spill/scratch (the largest of any of its kernels), ms, cache; then the
// first log lines of each failure and a one-line summary.
// `extra`: more columns after spill/scratch, one value per outcome each (a caller's figures,
// e.g. the compile command's CTAs per SM).
struct TableColumn {
  std::string header;
  std::vector<std::string> values;  // one per report outcome, in its order
};
[[nodiscard]] std::string format_compile_table(const CompileReport& report, const std::vector<TableColumn>& extra = {});

}  // namespace moetune::jit
