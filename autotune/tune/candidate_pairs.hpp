#pragma once
// From a bucket's per-stage candidates to the (stage one, stage two) pipelines that are
// timed. The full product is far too large to time (hundreds x hundreds), and the two stages
// must read one sort (search::sort_block_m: the same block_m, or a stage two reading the sort
// in halves beside a stage one of twice its block_m), so each valid candidate is timed as the
// *subject* of one pipeline whose other stage is its partner:
//   the baseline's other stage made to read the subject's sort (search::with_sort_of), when
//   that configuration is a valid candidate of the space (or is the baseline itself);
//   otherwise the first valid candidate of the other stage that reads it; otherwise there is
//   no pipeline and the candidate is pruned with that reason.
// Pipelines that come out identical are timed once; a pipeline equal to the baseline is not a
// candidate at all (it cannot beat itself).
// "Identical" is by machine code when the bucket carries code digests (BucketPlan::
// code_digests, filled after compilation): on AMD waves 0 and 1 emit the same launch bounds,
// so a candidate can be the baseline's code, or an earlier pipeline's, under another name.
// Such a code twin of the baseline is marked as the baseline's (is_baseline_pair), a twin of
// an earlier pipeline points at that pipeline; both say whose twin they are (code_twin_of).
// Without digests (a replayed run has no code) pipelines are identical by name only.
// A bucket with a fixed_pair (requalification) yields that one pipeline and nothing else.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "autotune/measure/sampler.hpp"
#include "autotune/tune/tune_plan.hpp"

namespace moetune::tune {

struct CandidateSlot {
  int stage = 1;                       // the plan candidate's stage
  std::string config;                  // its name
  std::optional<std::string> pruned;   // set: never timed, with the reason
  bool is_baseline_pair = false;       // its pipeline is the baseline itself (or its code twin)
  std::optional<std::size_t> pair;     // index into CandidatePairs::pairs
  // Set when its pipeline differs by name but not by machine code from the baseline (then
  // is_baseline_pair) or from an earlier pipeline (then `pair` is that one): the twin's name.
  std::optional<std::string> code_twin_of;
};

struct CandidatePairs {
  std::vector<measure::TunePair> pairs;       // distinct, none equal to the baseline
  std::vector<CandidateSlot> slots;  // one per plan candidate, in plan order
};

[[nodiscard]] measure::TunePair baseline_pair(const measure::BucketPlan& bucket);
[[nodiscard]] CandidatePairs make_candidate_pairs(const measure::BucketPlan& bucket);

}  // namespace moetune::tune
