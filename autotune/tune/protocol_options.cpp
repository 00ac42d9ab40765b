#include "autotune/tune/protocol_options.hpp"

#include <fmt/format.h>

#include "autotune/moe/random.hpp"
#include "autotune/tune/candidate_pairs.hpp"

namespace moetune::tune {
namespace {
// One splitmix64 step from `z` (the generator's one home, moe/random.hpp): decorrelates
// nearby (phase, attempt, index) triples. Unchanged values: declared seeds stay the same.
std::uint64_t mix(std::uint64_t z) { return moe::splitmix64(z); }
}  // namespace

bool CalibrationScope::matches(const measure::BucketPlan& bucket) const {
  auto a = shape;
  auto b = bucket.shape;
  a.tokens = b.tokens = 0;
  auto const base = baseline_pair(bucket).name();
  return a == b && M == bucket.M && baseline == base;
}

std::string CalibrationScope::describe() const {
  return fmt::format("H={} I={} E={} topk={} {} at M={}, baseline {}", shape.hidden, shape.inter,
                     shape.experts, shape.topk, moe::to_string(shape.dtype), M, baseline);
}

std::uint64_t block_seed(std::uint64_t run_seed, measure::Phase phase, int attempt, int index) {
  std::uint64_t h = mix(run_seed);
  h = mix(h ^ static_cast<std::uint64_t>(phase));
  h = mix(h ^ static_cast<std::uint64_t>(attempt));
  return mix(h ^ static_cast<std::uint64_t>(index));
}

}  // namespace moetune::tune
