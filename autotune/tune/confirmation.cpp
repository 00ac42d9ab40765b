#include "autotune/tune/confirmation.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "autotune/stats/futility.hpp"

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

std::string confirmation_stopping_rule(bool futility_stop) {
  if (!futility_stop) return "every declared block of an attempt is measured";
  return "futility stop: after each block but the last, the attempt ends if the gate could not "
         "pass against the baseline or the control even with every remaining pair at its best "
         "(the candidate faster, reduction 1); the gate's verdict is then its failure, exactly "
         "as after all blocks, and the control is judged on the pairs measured (a failed control "
         "is measured again, as after a whole attempt)";
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

int declared_pairs(const AttemptLayout& layout) {
  int n = 0;
  for (auto const& b : layout.blocks) n += static_cast<int>(b.rounds.size());
  return n;
}

// The reason the gate can no longer pass against the baseline or against the control after
// `rounds` (whole blocks), or nullopt.
std::optional<std::string> futile(const stats::GateSpec& gate, const std::vector<ConfirmRound>& rounds,
                                  int total_pairs) {
  using R = ConfirmRole;
  std::vector<stats::PairedSample> vs_baseline, vs_control;
  for (auto const& r : rounds) {
    vs_baseline.push_back(paired(r, R::baseline, R::candidate));
    vs_control.push_back(paired(r, R::control, R::candidate));
  }
  if (auto why = stats::gate_cannot_pass(gate, vs_baseline, total_pairs)) {
    return "against the baseline: " + *why;
  }
  if (auto why = stats::gate_cannot_pass(gate, vs_control, total_pairs)) {
    return "against the control: " + *why;
  }
  return std::nullopt;
}

std::string stop_reason(int after_blocks, const AttemptLayout& layout, const std::string& why) {
  return fmt::format("stopped after {} of {} blocks: the gate can no longer pass {}", after_blocks,
                     layout.blocks.size(), why);
}

}  // namespace

std::optional<FutilityStop> find_futility_stop(const stats::GateSpec& gate,
                                               const std::vector<ConfirmRound>& rounds,
                                               const AttemptLayout& layout) {
  int const total = declared_pairs(layout);
  if (static_cast<int>(rounds.size()) != total) {
    throw std::invalid_argument(fmt::format("find_futility_stop: {} rounds for a layout of {} pairs",
                                            rounds.size(), total));
  }
  std::vector<ConfirmRound> prefix;
  for (std::size_t b = 0; b + 1 < layout.blocks.size(); ++b) {
    for (auto const& r : rounds) {
      if (r.block == layout.blocks[b].index) prefix.push_back(r);
    }
    if (auto why = futile(gate, prefix, total)) {
      int const done = static_cast<int>(b) + 1;
      std::vector<stats::PairedSample> control;
      for (auto const& r : prefix) control.push_back(paired(r, ConfirmRole::baseline, ConfirmRole::control));
      bool const control_passed = stats::judge_control(gate, stats::summarize_pairs(control)).passed;
      return FutilityStop{done, static_cast<int>(prefix.size()), stop_reason(done, layout, *why),
                          control_passed};
    }
  }
  return std::nullopt;
}

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
      if (options.futility_stop && &block != &layout.blocks.back()) {
        if (auto why = futile(options.gate, att.rounds, declared_pairs(layout))) {
          int const done = static_cast<int>(&block - layout.blocks.data()) + 1;
          att.stopped_after_blocks = done;
          att.stop_reason = stop_reason(done, layout, *why);
          break;
        }
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
  if (att.stopped_after_blocks) {
    // The verdict is the one all blocks would have given: neither side can pass. The partial
    // summaries only say where the attempt stood, judged at their own pair count, so their
    // reasons say so (the declared design needs more wins than a partial count does).
    int const declared = declared_pairs(layout);
    auto const partial = fmt::format("after {} of {} pairs: ", att.rounds.size(), declared);
    auto relabel = [&](stats::GateVerdict& v) {
      v.passed = false;
      v.required_wins = stats::required_wins(options.gate, declared);
      for (auto& r : v.reasons) r = partial + r;
    };
    relabel(att.gate_vs_baseline);
    relabel(att.gate_vs_control);
    att.gate = combined(att.gate_vs_baseline, att.gate_vs_control);
    att.gate.reasons.insert(att.gate.reasons.begin(), att.stop_reason);
  }
  return out;
}

}  // namespace moetune::tune
