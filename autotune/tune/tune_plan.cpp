#include "autotune/tune/tune_plan.hpp"

#include <set>
#include <variant>

#include "autotune/search/render.hpp"
#include "autotune/tune/shape_from_key.hpp"

namespace moetune::tune {

std::size_t TunePlan::candidate_count() const {
  std::size_t n = 0;
  for (auto const& b : buckets) n += b.candidates.size();
  return n;
}

std::size_t TunePlan::pruned_count() const {
  std::size_t n = 0;
  for (auto const& b : buckets) {
    for (auto const& c : b.candidates) n += c.pruned_reason.has_value() ? 1 : 0;
  }
  return n;
}

std::variant<measure::BucketPlan, std::string> plan_bucket(const io::FmoeRow& row, search::Arch arch) {
  std::int64_t const M = row.actual_m.value_or(row.key.token);
  auto shape_or_reason = shape_from_key(row.key, M, arch);
  if (auto* reason = std::get_if<std::string>(&shape_or_reason)) return *reason;
  measure::BucketPlan bucket;
  bucket.key = row.key;
  bucket.line = row.line;
  bucket.M = M;
  bucket.shape = std::get<moe::MoeShape>(shape_or_reason);
  bucket.baseline = search::default_config(bucket.shape, arch, M);
  return bucket;
}

TunePlan make_tune_plan(const io::FmoeTable& untuned, const search::SearchSpace& space,
                        search::Arch arch) {
  TunePlan plan;
  plan.arch = arch;
  for (auto const& row : untuned.rows()) {
    auto planned = plan_bucket(row, arch);
    if (auto* reason = std::get_if<std::string>(&planned)) {
      plan.skipped.push_back({row.key, row.line, *reason});
      continue;
    }
    auto& bucket = std::get<measure::BucketPlan>(planned);
    bucket.candidates = search::enumerate(space, arch, bucket.shape);
    plan.buckets.push_back(std::move(bucket));
  }
  return plan;
}

std::vector<jit::KernelSource> plan_sources(const TunePlan& plan) {
  std::vector<jit::KernelSource> sources;
  std::set<std::string> seen;
  auto add = [&](const search::KernelConfig& config) {
    if (seen.insert(config.name()).second) sources.push_back(search::render(config, plan.arch));
  };
  for (auto const& bucket : plan.buckets) {
    add(bucket.baseline.stage1);
    add(bucket.baseline.stage2);
    for (auto const& c : bucket.candidates) {
      if (!c.pruned_reason) add(c.config);
    }
  }
  return sources;
}

}  // namespace moetune::tune
