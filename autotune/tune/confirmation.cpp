#include "autotune/tune/confirmation.hpp"

#include <stdexcept>

namespace moetune::tune {

namespace {

// A candidate sample either succeeds or ends the attempt: a fault is remembered here and
// turned into the result's fault by the caller.
struct CandidateFaulted {
  CandidateFault fault;
};

double sample_candidate(Sampler& sampler, const std::string& arm) {
  try {
    return sampler.sample_us(arm, TimedUnit::full);
  } catch (const SamplerError& e) {
    if (e.arm() != arm) throw;
    throw CandidateFaulted{{e.kind(), e.what(), false}};
  }
}

// Times `other` against the baseline arm back to back in the given order.
stats::PairedSample timed_pair(Sampler& sampler, const std::string& base_arm,
                               const std::string& other_arm, bool other_is_candidate,
                               bool baseline_first, int block) {
  stats::PairedSample s;
  s.block = block;
  s.baseline_first = baseline_first;
  auto other = [&] {
    // The control arm is the baseline's code: its fault is the baseline's and propagates.
    return other_is_candidate ? sample_candidate(sampler, other_arm)
                              : sampler.sample_us(other_arm, TimedUnit::full);
  };
  if (baseline_first) {
    s.baseline_us = sampler.sample_us(base_arm, TimedUnit::full);
    s.candidate_us = other();
  } else {
    s.candidate_us = other();
    s.baseline_us = sampler.sample_us(base_arm, TimedUnit::full);
  }
  return s;
}

}  // namespace

ConfirmationResult run_confirmation(Sampler& sampler, const ProtocolOptions& options,
                                    const ConfirmArms& arms, int attempt,
                                    std::span<const std::uint64_t> block_seeds) {
  if (block_seeds.empty() || options.pairs_per_block < 1) {
    throw std::invalid_argument("run_confirmation: needs at least one block and one pair");
  }
  auto const& base = arms.baseline.label;
  auto const& cand = arms.candidate.label;
  auto const& ctrl = arms.control.label;
  if (base == cand || base == ctrl || cand == ctrl) {
    throw std::invalid_argument("run_confirmation: the three arms need distinct labels");
  }
  ConfirmationResult out;
  out.attempt.attempt = attempt;
  int const ppb = options.pairs_per_block;
  try {
    for (std::size_t b = 0; b < block_seeds.size(); ++b) {
      int const block = static_cast<int>(b);
      BlockSpec spec;
      spec.phase = Phase::confirm;
      spec.attempt = attempt;
      spec.index = block;
      spec.seed = block_seeds[b];
      spec.arms = {arms.baseline, arms.candidate, arms.control};
      try {
        sampler.begin_block(spec);
      } catch (const SamplerError& e) {
        if (e.arm() != cand) throw;
        out.fault = CandidateFault{e.kind(), e.what(), true};
        return out;
      }
      for (int i = 0; i < ppb; ++i) {
        // Alternation runs across the whole attempt, not per block.
        bool const baseline_first = (block * ppb + i) % 2 == 0;
        out.attempt.comparison.push_back(
            timed_pair(sampler, base, cand, true, baseline_first, block));
        out.attempt.control.push_back(
            timed_pair(sampler, base, ctrl, false, baseline_first, block));
      }
    }
  } catch (const CandidateFaulted& f) {
    out.fault = f.fault;
    return out;
  }
  auto& att = out.attempt;
  att.comparison_summary = stats::summarize_pairs(att.comparison);
  att.control_summary = stats::summarize_pairs(att.control);
  att.gate = stats::apply_gate(options.gate, att.comparison_summary);
  att.control_verdict = stats::judge_control(options.gate, att.control_summary);
  return out;
}

}  // namespace moetune::tune
