#include "autotune/tune/manifest.hpp"

namespace moetune::tune {

nlohmann::json to_json(const stats::GateSpec& gate) {
  return {{"min_median_reduction", gate.min_median_reduction},
          {"reference_wins", gate.reference_wins},
          {"reference_pairs", gate.reference_pairs},
          {"require_every_block", gate.require_every_block},
          {"block_share", gate.block_share},
          {"control_fraction", gate.control_fraction}};
}

nlohmann::json to_json(const Manifest& m) {
  nlohmann::json j{{"bucket", m.bucket},
                   {"token", m.token},
                   {"M", m.M},
                   {"baseline", m.baseline},
                   {"candidate", m.candidate},
                   {"gate", to_json(m.gate)},
                   {"blocks", m.blocks},
                   {"pairs_per_block", m.pairs_per_block},
                   {"pairs", m.pairs},
                   {"required_wins", m.required_wins},
                   {"repeats", m.repeats},
                   {"max_remeasures", m.max_remeasures},
                   {"order", m.order},
                   {"control", m.control},
                   {"stopping", m.stopping},
                   {"block_seeds", m.block_seeds}};
  nlohmann::json layouts = nlohmann::json::array();
  for (auto const& l : m.layouts) layouts.push_back(to_json(l));
  j["layouts"] = std::move(layouts);
  // null, not a number, when `calibrate` has not measured this design.
  j["false_qualification_rate"] =
      m.false_qualification_rate ? nlohmann::json(*m.false_qualification_rate) : nlohmann::json();
  j["calibration"] = m.calibration;
  return j;
}

}  // namespace moetune::tune
