#include "autotune/tune/candidate_pairs.hpp"

#include <map>

#include <fmt/format.h>

#include "autotune/search/validity.hpp"

namespace moetune::tune {

measure::TunePair baseline_pair(const measure::BucketPlan& bucket) {
  return {bucket.baseline.stage1, bucket.baseline.stage2};
}

namespace {

// The partner of a subject in `other_stage`: see the header for the rule. It reads the
// subject's sort (search::sort_block_m: one block_m, or a stage two reading the sort in halves
// beside a stage one of twice its block_m) and shares its h format (h_bf16: the stage two
// reads what the stage one writes).
std::optional<search::KernelConfig> partner(const measure::BucketPlan& bucket, int other_stage,
                                            const search::KernelConfig& subject) {
  search::KernelConfig preferred =
      other_stage == 1 ? bucket.baseline.stage1 : bucket.baseline.stage2;
  bool const baseline_fits =
      search::sort_block_m(preferred) == search::sort_block_m(subject) && preferred.h_bf16 == subject.h_bf16;
  preferred = search::with_sort_of(preferred, subject);
  preferred.h_bf16 = subject.h_bf16;
  if (baseline_fits) return preferred;  // the baseline's own stage: compiled anyway
  std::optional<search::KernelConfig> first;
  for (auto const& c : bucket.candidates) {
    if (c.pruned_reason || c.config.stage != other_stage || search::pair_violation_either(c.config, subject)) continue;
    if (c.config == preferred) return c.config;
    if (!first) first = c.config;
  }
  return first;
}

// The machine code of a pipeline: both stages' digests, or nullopt when either is unknown
// (no digests for this bucket, or a unit that did not compile): then only names compare.
std::optional<std::string> pipeline_code(const measure::BucketPlan& bucket, const measure::TunePair& pair) {
  if (!bucket.code_digests) return std::nullopt;
  auto const s1 = bucket.code_digests->find(pair.stage1.name());
  auto const s2 = bucket.code_digests->find(pair.stage2.name());
  if (s1 == bucket.code_digests->end() || s2 == bucket.code_digests->end() ||
      s1->second.empty() || s2->second.empty()) {
    return std::nullopt;
  }
  return s1->second + "+" + s2->second;
}

// A fixed pair: every plan candidate that is one of its two stages points at it; anything
// else in the plan is not timed (requalification asks about one pipeline only).
CandidatePairs fixed_candidate_pairs(const measure::BucketPlan& bucket) {
  CandidatePairs out;
  measure::TunePair const fixed{bucket.fixed_pair->stage1, bucket.fixed_pair->stage2};
  bool const is_baseline = fixed == baseline_pair(bucket);
  if (!is_baseline) out.pairs.push_back(fixed);
  for (auto const& c : bucket.candidates) {
    CandidateSlot slot;
    slot.stage = c.config.stage;
    slot.config = c.config.name();
    if (c.pruned_reason) {
      slot.pruned = *c.pruned_reason;
    } else if (c.config != (c.config.stage == 1 ? fixed.stage1 : fixed.stage2)) {
      slot.pruned = "not part of the fixed pair " + fixed.name();
    } else if (is_baseline) {
      slot.is_baseline_pair = true;
    } else {
      slot.pair = 0;
    }
    out.slots.push_back(std::move(slot));
  }
  return out;
}

}  // namespace

CandidatePairs make_candidate_pairs(const measure::BucketPlan& bucket) {
  if (bucket.fixed_pair) return fixed_candidate_pairs(bucket);
  CandidatePairs out;
  measure::TunePair const base = baseline_pair(bucket);
  auto const base_code = pipeline_code(bucket, base);
  std::map<std::string, std::size_t> index;       // by pipeline name
  std::map<std::string, std::size_t> code_index;  // by pipeline machine code
  for (auto const& c : bucket.candidates) {
    CandidateSlot slot;
    slot.stage = c.config.stage;
    slot.config = c.config.name();
    if (c.pruned_reason) {
      slot.pruned = *c.pruned_reason;
      out.slots.push_back(std::move(slot));
      continue;
    }
    int const other = c.config.stage == 1 ? 2 : 1;
    auto const p = partner(bucket, other, c.config);
    if (!p) {
      slot.pruned = fmt::format("no valid stage-{} configuration reading a sort of block_m {}{} to pair with", other,
                                search::sort_block_m(c.config), c.config.h_bf16 ? " keeping h in bf16" : "");
      out.slots.push_back(std::move(slot));
      continue;
    }
    measure::TunePair pair = c.config.stage == 1 ? measure::TunePair{c.config, *p} : measure::TunePair{*p, c.config};
    auto const code = pipeline_code(bucket, pair);
    if (pair == base || (code && code == base_code)) {
      slot.is_baseline_pair = true;
      if (pair != base) slot.code_twin_of = base.name();
      out.slots.push_back(std::move(slot));
      continue;
    }
    auto const name = pair.name();
    if (auto const it = index.find(name); it != index.end()) {
      slot.pair = it->second;
    } else if (auto const twin = code ? code_index.find(*code) : code_index.end();
               twin != code_index.end()) {
      // Another name for code already timed: timing it again would only measure noise.
      slot.pair = twin->second;
      slot.code_twin_of = out.pairs[twin->second].name();
    } else {
      slot.pair = out.pairs.size();
      index.emplace(name, out.pairs.size());
      if (code) code_index.emplace(*code, out.pairs.size());
      out.pairs.push_back(std::move(pair));
    }
    out.slots.push_back(std::move(slot));
  }
  return out;
}

}  // namespace moetune::tune
