#pragma once
// The options of every command that times kernels on the device (tune, calibrate, requalify,
// bench): the timing routing, whether weights rotate through cold copies, the workload seed
// and the code cache. One definition, so the same flag means the same thing in each command
// and a tuned row, its calibration and its requalification can be measured alike.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace moetune::app {

struct MeasurementOptions {
  std::string routing = "uniform";
  bool hot = false;
  std::uint64_t seed = 1;
  std::string cache_dir;

  // --routing, --hot, --seed (described by `seed_help`: what the seed drives in that command)
  // and --cache-dir.
  void add_measurement_options(CLI::App& cmd, const std::string& seed_help);
};

}  // namespace moetune::app
