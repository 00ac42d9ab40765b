#include "apps/moe-tune/measurement_options.hpp"

namespace moetune::app {

void MeasurementOptions::add_measurement_options(CLI::App& cmd, const std::string& seed_help) {
  cmd.add_option("--routing", routing,
                 "Timing routing: uniform, round_robin, concentrated, zipf:S, file:PATH")
      ->capture_default_str();
  cmd.add_flag("--hot", hot, "Do not rotate weight copies (weights may stay in L2)");
  cmd.add_option("--seed", seed, seed_help)->capture_default_str();
  cmd.add_option("--cache-dir", cache_dir, "Code cache directory");
}

}  // namespace moetune::app
