// tune --calibration: a calibrate JSON's null-case rate is stated only for the design and
// arch it was measured for; anything else is refused with every differing field named.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "autotune/core/error.hpp"
#include "autotune/tune/calibration_record.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using Catch::Contains;

namespace {

// The shape of `moe-tune calibrate --json` (apps/moe-tune/cmd_calibrate.cpp) for the default
// design: 4 x 8 pairs, gate 1 %, 26 of 32 wins, control 0.5, one remeasure.
nlohmann::json calibrate_output(const char* sampler = "gpu") {
  return {{"machine", {{"arch", "sm_90"}, {"device", "NVIDIA H200"}, {"sampler", sampler}}},
          {"protocol",
           {{"confirm_blocks", 4}, {"pairs_per_block", 8}, {"control_remeasures", 1},
            {"min_median_reduction", 0.01}, {"required_wins", 26}, {"require_every_block", true},
            {"control_fraction", 0.5}, {"seed", 1}}},
          {"cases",
           {{{"name", "power 3%"}, {"trials", 100}, {"qualified", 100}, {"ci95", {0.964, 1.0}}},
            {{"name", "null"}, {"trials", 100}, {"qualified", 0}, {"ci95", {0.0, 0.0362}}}}}};
}

std::filesystem::path write(const char* name, const nlohmann::json& j) {
  auto const path = test::scratch_dir(name) / "calibration.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

}  // namespace

TEST_CASE("a calibration of the same design and arch is stated with its interval and source", "[tune]") {
  tune::ProtocolOptions options;
  auto const file = write("calibration_ok", calibrate_output());
  auto const r = tune::read_calibration(file, options, "sm_90", false);
  CHECK(r.trials == 100);
  CHECK(r.qualified == 0);
  CHECK(r.rate == 0.0);
  CHECK(r.ci_upper == Approx(0.0362));
  CHECK(r.device == "NVIDIA H200");
  tune::apply_calibration(r, options);
  REQUIRE(options.false_qualification_rate);
  CHECK(*options.false_qualification_rate == 0.0);
  CHECK_THAT(options.calibration, Contains("0/100 null trials qualified (95 % CI 0.0-3.6 %)") &&
                                      Contains("NVIDIA H200") && Contains(file.string()));
}

TEST_CASE("a calibration of another design, arch or sampler is refused, naming why", "[tune]") {
  tune::ProtocolOptions options;
  options.pairs_per_block = 10;  // 40 pairs: another design, another win count
  auto const file = write("calibration_other_design", calibrate_output());
  CHECK_THROWS_WITH(tune::read_calibration(file, options, "gfx942", false),
                    Contains("calibration.json") && Contains("different design") &&
                        Contains("pairs_per_block: calibrated 8, this run 10") &&
                        Contains("required_wins: calibrated 26") &&
                        Contains("arch: calibrated sm_90, this run gfx942"));
  auto const replayed = write("calibration_replayed", calibrate_output("replay"));
  CHECK_THROWS_WITH(tune::read_calibration(replayed, tune::ProtocolOptions{}, "sm_90", false),
                    Contains("replayed calibration"));
  CHECK_NOTHROW(tune::read_calibration(replayed, tune::ProtocolOptions{}, "sm_90", true));
}

TEST_CASE("a calibration file without a usable null case is refused", "[tune]") {
  auto j = calibrate_output();
  j["cases"].erase(1);
  auto const power_only = write("calibration_power_only", j);
  CHECK_THROWS_WITH(tune::read_calibration(power_only, tune::ProtocolOptions{}, "sm_90", false),
                    Contains("no null case"));
  auto const not_calibrate = write("calibration_not_calibrate", nlohmann::json{{"rows", 3}});
  CHECK_THROWS_WITH(tune::read_calibration(not_calibrate, tune::ProtocolOptions{}, "sm_90", false),
                    Contains("not `moe-tune calibrate --json` output"));
  auto const bad_json = test::scratch_dir("calibration_bad_json") / "c.json";
  std::ofstream(bad_json) << "{ nope";
  CHECK_THROWS_WITH(tune::read_calibration(bad_json, tune::ProtocolOptions{}, "sm_90", false),
                    Contains("invalid JSON"));
}
