#include "autotune/tune/code_twins.hpp"

#include <memory>
#include <utility>

#include "autotune/tune/candidate_pairs.hpp"

namespace moetune::tune {

measure::CodeDigests code_digests_of(const jit::CompileReport& report) {
  measure::CodeDigests out;
  for (auto const& o : report.outcomes) {
    if (!o.code_digest.empty()) out.emplace(o.unit_name, o.code_digest);
  }
  return out;
}

void attach_code_digests(TunePlan& plan, measure::CodeDigests digests) {
  auto const shared = std::make_shared<const measure::CodeDigests>(std::move(digests));
  for (auto& bucket : plan.buckets) bucket.code_digests = shared;
}

CodeTwinCount count_code_twins(const TunePlan& plan) {
  CodeTwinCount count;
  for (auto const& bucket : plan.buckets) {
    if (!bucket.code_digests) continue;
    for (auto const& slot : make_candidate_pairs(bucket).slots) {
      if (!slot.code_twin_of) continue;
      ++(slot.is_baseline_pair ? count.baseline_twins : count.pipeline_twins);
    }
  }
  return count;
}

}  // namespace moetune::tune
