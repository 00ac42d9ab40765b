#pragma once
// The plan of a tuning run: for every row of the untuned list, the M it is timed at, the
// shape our kernels see, the default (baseline) configuration and every candidate of the
// search space with its pruning verdict. Rows moe-tune has no kernel for are kept with the
// reason, so the report accounts for every input line.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "autotune/io/fmoe_table.hpp"
#include "autotune/jit/kernel_source.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/measure/bucket_plan.hpp"
#include "autotune/search/search_space.hpp"

namespace moetune::tune {

struct SkippedRow {
  io::FmoeKey key;
  std::int64_t line = 0;
  std::string reason;
};

struct TunePlan {
  search::Arch arch = search::Arch::sm_90;
  std::vector<measure::BucketPlan> buckets;
  std::vector<SkippedRow> skipped;

  [[nodiscard]] std::size_t candidate_count() const;
  [[nodiscard]] std::size_t pruned_count() const;
};

// One row's bucket without candidates: the M it is timed at (actual_m, else token), its
// shape and the default configuration — or why no moe-tune kernel covers the row's key.
[[nodiscard]] std::variant<measure::BucketPlan, std::string> plan_bucket(const io::FmoeRow& row,
                                                                search::Arch arch);

[[nodiscard]] TunePlan make_tune_plan(const io::FmoeTable& untuned,
                                      const search::SearchSpace& space, search::Arch arch);

// Every distinct translation unit the plan needs (valid candidates and baselines), each once.
[[nodiscard]] std::vector<jit::KernelSource> plan_sources(const TunePlan& plan);

}  // namespace moetune::tune
