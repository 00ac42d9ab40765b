#pragma once
// Code twins of a plan: candidates whose pipeline is, in machine code, the baseline's or an
// earlier pipeline's under another name (candidate_pairs.hpp). The compile stage digests every
// unit (jit/machine_code_digest.hpp); attaching the digests to the plan is what makes
// make_candidate_pairs compare code instead of names. A plan without them (a replayed run:
// its pipelines have no code) compares names only.
#include <cstddef>

#include "autotune/jit/compile_pool.hpp"
#include "autotune/tune/tune_plan.hpp"

namespace moetune::tune {

// Unit name -> code digest of every unit that compiled.
[[nodiscard]] measure::CodeDigests code_digests_of(const jit::CompileReport& report);

// Shares `digests` with every bucket of the plan.
void attach_code_digests(TunePlan& plan, measure::CodeDigests digests);

struct CodeTwinCount {
  std::size_t baseline_twins = 0;  // candidates with the baseline's code: not candidates
  std::size_t pipeline_twins = 0;  // candidates with an earlier pipeline's code: timed once
  [[nodiscard]] std::size_t total() const { return baseline_twins + pipeline_twins; }
};

// Over every bucket of the plan (zero for a plan without digests).
[[nodiscard]] CodeTwinCount count_code_twins(const TunePlan& plan);

}  // namespace moetune::tune
