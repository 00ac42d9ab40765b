#include "autotune/tune/confirmation.hpp"

#include <stdexcept>

namespace moetune::tune {

double& ConfirmRound::time_of(ConfirmRole role) {
  switch (role) {
    case ConfirmRole::baseline: return baseline_us;
    case ConfirmRole::candidate: return candidate_us;
    case ConfirmRole::control: return control_us;
  }
  throw std::logic_error("ConfirmRound: unknown role");
}

double ConfirmRound::time_of(ConfirmRole role) const {
  return const_cast<ConfirmRound&>(*this).time_of(role);
}

const measure::Arm& ConfirmArms::operator[](ConfirmRole role) const {
  switch (role) {
    case ConfirmRole::baseline: return baseline;
    case ConfirmRole::candidate: return candidate;
    case ConfirmRole::control: return control;
  }
  throw std::logic_error("ConfirmArms: unknown role");
}

std::string confirmation_order_rule() {
  return "per block, the three arms are built in one of their six orders behind a placement pad "
         "of random size, the blocks of an attempt taking the six orders in a shuffled sequence; "
         "each round times baseline, candidate and control once, in one of the six orders, the "
         "rounds of a block taking the six orders in shuffled sequences (every arm in every "
         "position, and after every other arm, equally often per six rounds); every order, pad "
         "and seed is declared in `layouts`";
}

std::string confirmation_control_rule() {
  return "the baseline against a separately built instance of itself (own pipeline buffers, own "
         "graph capture, same inputs and weights), timed in the same rounds as the comparison; "
         "it must not pass the gate in either direction and |median| must stay under "
         "control_fraction x threshold; the candidate must also pass the gate against it";
}

namespace {

// A candidate sample either succeeds or ends the attempt: a fault is remembered here and
// turned into the result's fault by the caller.
struct CandidateFaulted {
  CandidateFault fault;
};

double sample_role(measure::Sampler& sampler, const ConfirmArms& arms, ConfirmRole role) {
  auto const& label = arms[role].label;
  if (role != ConfirmRole::candidate) {
    // The control arm is the baseline's code: its fault is the baseline's and propagates.
    return sampler.sample_us(label, measure::TimedUnit::full);
  }
  try {
    return sampler.sample_us(label, measure::TimedUnit::full);
  } catch (const measure::SamplerError& e) {
    if (e.arm() != label) throw;
    throw CandidateFaulted{{e.kind(), e.what(), false}};
  }
}

int position(const RoleOrder& order, ConfirmRole role) {
  for (int i = 0; i < 3; ++i) {
    if (order[static_cast<std::size_t>(i)] == role) return i;
  }
  throw std::logic_error("confirmation: a round without every role");
}

// `reference` plays the baseline's part of the paired sample, `other` the candidate's.
stats::PairedSample paired(const ConfirmRound& r, ConfirmRole reference, ConfirmRole other) {
  stats::PairedSample s;
  s.block = r.block;
  s.baseline_us = r.time_of(reference);
  s.candidate_us = r.time_of(other);
  s.baseline_first = position(r.order, reference) < position(r.order, other);
  return s;
}

stats::GateVerdict combined(const stats::GateVerdict& vs_baseline,
                            const stats::GateVerdict& vs_control) {
  stats::GateVerdict v;
  v.passed = vs_baseline.passed && vs_control.passed;
  v.required_wins = vs_baseline.required_wins;
  for (auto const& r : vs_baseline.reasons) v.reasons.push_back("vs baseline: " + r);
  for (auto const& r : vs_control.reasons) v.reasons.push_back("vs control: " + r);
  return v;
}

}  // namespace

ConfirmationResult run_confirmation(measure::Sampler& sampler, const ProtocolOptions& options,
                                    const ConfirmArms& arms, const AttemptLayout& layout) {
  if (layout.blocks.empty()) {
    throw std::invalid_argument("run_confirmation: needs at least one block");
  }
  for (auto const& b : layout.blocks) {
    if (b.rounds.empty()) throw std::invalid_argument("run_confirmation: a block without rounds");
  }
  auto const& base = arms.baseline.label;
  auto const& cand = arms.candidate.label;
  auto const& ctrl = arms.control.label;
  if (base == cand || base == ctrl || cand == ctrl) {
    throw std::invalid_argument("run_confirmation: the three arms need distinct labels");
  }
  ConfirmationResult out;
  auto& att = out.attempt;
  att.attempt = layout.attempt;
  att.layout = layout;
  try {
    for (auto const& block : layout.blocks) {
      measure::BlockSpec spec;
      spec.phase = measure::Phase::confirm;
      spec.attempt = layout.attempt;
      spec.index = block.index;
      spec.seed = block.seed;
      spec.placement_pad_bytes = block.placement_pad_bytes;
      for (auto role : block.build_order) spec.arms.push_back(arms[role]);
      try {
        sampler.begin_block(spec);
      } catch (const measure::SamplerError& e) {
        if (e.arm() != cand) throw;
        out.fault = CandidateFault{e.kind(), e.what(), true};
        return out;
      }
      for (auto const& order : block.rounds) {
        ConfirmRound r;
        r.block = block.index;
        r.order = order;
        for (auto role : order) {
          r.time_of(role) = sample_role(sampler, arms, role);
        }
        att.rounds.push_back(r);
      }
    }
  } catch (const CandidateFaulted& f) {
    out.fault = f.fault;
    return out;
  }
  using R = ConfirmRole;
  for (auto const& r : att.rounds) {
    att.comparison.push_back(paired(r, R::baseline, R::candidate));
    att.versus_control.push_back(paired(r, R::control, R::candidate));
    att.control.push_back(paired(r, R::baseline, R::control));
  }
  att.comparison_summary = stats::summarize_pairs(att.comparison);
  att.versus_control_summary = stats::summarize_pairs(att.versus_control);
  att.control_summary = stats::summarize_pairs(att.control);
  att.gate_vs_baseline = stats::apply_gate(options.gate, att.comparison_summary);
  att.gate_vs_control = stats::apply_gate(options.gate, att.versus_control_summary);
  att.gate = combined(att.gate_vs_baseline, att.gate_vs_control);
  att.control_verdict = stats::judge_control(options.gate, att.control_summary);
  return out;
}

}  // namespace moetune::tune
