// tune --calibration: a calibrate JSON's null-case rate is stated only for the design, arch,
// device, routing and --hot setting it was measured with, and only for the bucket (shape, M,
// baseline) it was measured on; anything else is refused with every differing field named.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "autotune/core/error.hpp"
#include "autotune/tune/calibration_record.hpp"
#include "autotune/tune/confirmation.hpp"
#include "test/support/test_paths.hpp"
#include "test/tune/tune_fixtures.hpp"

using namespace moetune;
using Catch::Contains;

namespace {

// The backbone bucket calibrate measures by default (token 8 timed at M = 8).
measure::BucketPlan calibrated_bucket() { return test::make_bucket(8, 8, 1); }

// The shape of `moe-tune calibrate --json` (apps/moe-tune/cmd_calibrate.cpp) for the default
// design: 6 x 6 pairs, gate 1 %, 29 of 36 wins, control 0.5, block share 0.5, one remeasure,
// the futility stop.
nlohmann::json calibrate_output(const char* sampler = "gpu") {
  auto const b = calibrated_bucket();
  return {{"machine",
           {{"arch", "sm_90"}, {"device", "NVIDIA H200"}, {"sampler", sampler},
            {"routing", "uniform"}, {"hot", false}}},
          {"baseline", tune::baseline_pair(b).name()},
          {"workload",
           {{"hidden", 5120}, {"inter", 640}, {"experts", 384}, {"topk", 6}, {"dtype", "a16w4"},
            {"M", 8}}},
          {"protocol",
           {{"confirm_blocks", 6}, {"pairs_per_block", 6}, {"control_remeasures", 1},
            {"futility_stop", true}, {"min_median_reduction", 0.01}, {"required_wins", 29}, {"require_every_block", true},
            {"control_fraction", 0.5}, {"block_share", 0.5},
            {"order_design", tune::kConfirmationOrderDesign}, {"seed", 1}}},
          {"cases",
           {{{"name", "power 3%"}, {"trials", 100}, {"qualified", 100}, {"ci95", {0.964, 1.0}}},
            {{"name", "null"}, {"trials", 400}, {"qualified", 0}, {"ci95", {0.0, 0.0092}}}}}};
}

tune::CalibrationContext h200(bool replayed = false) {
  return {"sm_90", "NVIDIA H200", "uniform", false, replayed};
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
  auto const r = tune::read_calibration(file, options, h200());
  CHECK(r.trials == 400);
  CHECK(r.qualified == 0);
  CHECK(r.rate == 0.0);
  CHECK(r.ci_upper == Approx(0.0092));
  CHECK(r.device == "NVIDIA H200");
  CHECK(r.scope.M == 8);
  CHECK(r.scope.matches(calibrated_bucket()));
  tune::apply_calibration(r, options);
  REQUIRE(options.false_qualification_rate);
  CHECK(*options.false_qualification_rate == 0.0);
  CHECK_THAT(options.calibration, Contains("0/400 null trials qualified (95 % CI 0.0-0.9 %)") &&
                                      Contains("NVIDIA H200") && Contains(file.string()) &&
                                      Contains("at M=8"));
  REQUIRE(options.calibration_scope);
}

TEST_CASE("a calibration of another design, arch, device, routing or sampler is refused, naming why",
          "[tune]") {
  tune::ProtocolOptions options;
  options.pairs_per_block = 10;  // 60 pairs: another design, another win count
  auto const file = write("calibration_other_design", calibrate_output());
  tune::CalibrationContext other{"gfx942", "AMD Instinct MI300X", "zipf:1.2", true, false};
  CHECK_THROWS_WITH(tune::read_calibration(file, options, other),
                    Contains("calibration.json") && Contains("different design") &&
                        Contains("pairs_per_block: calibrated 6, this run 10") &&
                        Contains("required_wins: calibrated 29") &&
                        Contains("arch: calibrated sm_90, this run gfx942") &&
                        Contains("device: calibrated NVIDIA H200, this run AMD Instinct MI300X") &&
                        Contains("routing: calibrated uniform, this run zipf:1.2") &&
                        Contains("hot: calibrated false, this run true"));
  // A calibration of the fixed-order design that came before is another design.
  auto old = calibrate_output();
  old["protocol"]["order_design"] = "fixed-alternating";
  CHECK_THROWS_WITH(tune::read_calibration(write("calibration_old_order", old),
                                           tune::ProtocolOptions{}, h200()),
                    Contains("order_design: calibrated fixed-alternating"));
  // A file from before the futility stop (no key) calibrated the design without it.
  auto before_stop = calibrate_output();
  before_stop["protocol"].erase("futility_stop");
  CHECK_THROWS_WITH(tune::read_calibration(write("calibration_before_stop", before_stop),
                                           tune::ProtocolOptions{}, h200()),
                    Contains("futility_stop: calibrated false, this run true"));
  tune::ProtocolOptions no_stop;
  no_stop.futility_stop = false;
  CHECK_NOTHROW(tune::read_calibration(write("calibration_before_stop2", before_stop), no_stop, h200()));
  auto const replayed = write("calibration_replayed", calibrate_output("replay"));
  CHECK_THROWS_WITH(tune::read_calibration(replayed, tune::ProtocolOptions{}, h200()),
                    Contains("replayed calibration"));
  CHECK_NOTHROW(tune::read_calibration(replayed, tune::ProtocolOptions{}, h200(true)));
}

TEST_CASE("a calibration is stated only for its own bucket", "[tune]") {
  auto const r = tune::read_calibration(write("calibration_scope", calibrate_output()),
                                        tune::ProtocolOptions{}, h200());
  tune::TunePlan plan;
  plan.buckets = {test::make_bucket(64, 48, 1), test::make_bucket(8, 8, 1)};
  CHECK_NOTHROW(tune::check_calibration_applies(r, plan));
  CHECK_FALSE(r.scope.matches(plan.buckets[0]));  // another M: no rate stated there
  CHECK(r.scope.matches(plan.buckets[1]));
  plan.buckets.pop_back();
  CHECK_THROWS_WITH(tune::check_calibration_applies(r, plan),
                    Contains("no bucket of this run") && Contains("at M=8") &&
                        Contains("at M=48"));
  // The same M under another baseline pair is another null.
  auto j = calibrate_output();
  j["baseline"] = "some_other_stage1+some_other_stage2";
  auto const other = tune::read_calibration(write("calibration_other_baseline", j),
                                            tune::ProtocolOptions{}, h200());
  CHECK_FALSE(other.scope.matches(test::make_bucket(8, 8, 1)));
}

TEST_CASE("a calibration file without a usable null case is refused", "[tune]") {
  auto j = calibrate_output();
  j["cases"].erase(1);
  auto const power_only = write("calibration_power_only", j);
  CHECK_THROWS_WITH(tune::read_calibration(power_only, tune::ProtocolOptions{}, h200()),
                    Contains("no null case"));
  auto const not_calibrate = write("calibration_not_calibrate", nlohmann::json{{"rows", 3}});
  CHECK_THROWS_WITH(tune::read_calibration(not_calibrate, tune::ProtocolOptions{}, h200()),
                    Contains("not `moe-tune calibrate --json` output"));
  auto const bad_json = test::scratch_dir("calibration_bad_json") / "c.json";
  std::ofstream(bad_json) << "{ nope";
  CHECK_THROWS_WITH(tune::read_calibration(bad_json, tune::ProtocolOptions{}, h200()),
                    Contains("invalid JSON"));
}
