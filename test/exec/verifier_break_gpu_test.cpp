// Each correctness gate of the verifier can fail: units with one deliberate bug
// (kernels/moe_test_break.cuh, rendered only for tests by search::render_with_test_break)
// must fail exactly the gate that exists to catch that bug, with a message naming it. Each
// test also runs the same check on the unbroken units, so a failure is the bug's, never the
// set-up's.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "autotune/exec/verifier.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/test_break.hpp"

using namespace moetune;
using Catch::Matchers::Contains;
using search::TestBreak;

namespace {

gpu::Device& device() {
  static gpu::Device instance(0);
  return instance;
}

search::Arch arch() { return search::parse_arch(device().info().arch); }

// Small, fast, and topk = 4: routing weights (a softmax over topk) are well below 1, so a
// skipped weight moves every output.
moe::MoeShape small_shape(moe::DtypePath dtype, bool doweight_stage1 = false) {
  moe::MoeShape s;
  s.hidden = 1024;
  s.inter = 256;
  s.experts = 32;
  s.topk = 4;
  s.dtype = dtype;
  s.doweight_stage1 = doweight_stage1;
  return s;
}

constexpr std::int64_t bucket_m = 16;

// One compiler and verifier per (break, shape): Catch2 re-enters test cases per SECTION.
struct Rig {
  std::unique_ptr<exec::UnitCompiler> compiler;
  std::unique_ptr<exec::Verifier> verifier;
  search::DefaultConfigs pair;
};
Rig& rig(const moe::MoeShape& shape, search::TestBreakSpec spec) {
  static std::map<std::string, Rig> rigs;
  auto const key = fmt::format("{} {} {}", moe::to_string(shape), search::to_string(spec.kind), spec.above_m);
  auto& r = rigs[key];
  if (!r.compiler) {
    r.compiler = std::make_unique<exec::UnitCompiler>(arch(), std::filesystem::path{}, true, spec);
    r.verifier = std::make_unique<exec::Verifier>(device(), *r.compiler, shape, 11);
    r.pair = search::default_config(shape, arch(), bucket_m);
  }
  return r;
}

exec::CheckResult check(const moe::MoeShape& shape, TestBreak kind, std::int64_t M = bucket_m,
                        bool check_inputs = false) {
  auto& r = rig(shape, {kind, 64});
  return r.verifier->check(r.pair.stage1, r.pair.stage2, M, moe::RoutingSpec{}, check_inputs);
}

std::string gate(std::string_view name) { return std::string(name) + ":"; }

}  // namespace

TEST_CASE("break control: the unbroken units pass every check the broken ones fail",
          "[gpu][exec][break]") {
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4}) {
    for (bool doweight : {false, true}) {
      auto const shape = small_shape(dtype, doweight);
      for (std::int64_t M : {bucket_m, std::int64_t{100}}) {
        auto const r = check(shape, TestBreak::none, M, true);
        INFO(moe::to_string(shape) << " M=" << M << ": " << r.detail);
        CHECK(r.passed);
      }
    }
  }
}

TEST_CASE("break: a wrong value in one output element fails y against the reference",
          "[gpu][exec][break]") {
  auto const r = check(small_shape(moe::DtypePath::a16w4), TestBreak::wrong_output_element);
  INFO(r.detail);
  CHECK_FALSE(r.passed);
  CHECK_THAT(r.detail, Contains(gate(exec::gate_names::output)));
  CHECK_THAT(r.detail, Contains("FAIL 1/"));               // exactly one element
  CHECK_THAT(r.detail, Contains("first at row 0 col 0"));  // and it is located
  CHECK_THAT(r.detail, !Contains(gate(exec::gate_names::write_coverage)));
  CHECK_THAT(r.detail, !Contains(gate(exec::gate_names::intermediate)));
}

TEST_CASE("break: a skipped routing weight in stage two fails y against the reference",
          "[gpu][exec][break]") {
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4}) {
    auto const r = check(small_shape(dtype), TestBreak::skip_routing_weight);
    INFO(moe::to_string(dtype) << ": " << r.detail);
    CHECK_FALSE(r.passed);
    CHECK_THAT(r.detail, Contains(gate(exec::gate_names::output)));
    // Stage one does not apply the weight in this shape: its h is right.
    CHECK_THAT(r.detail, !Contains(gate(exec::gate_names::intermediate)));
  }
}

TEST_CASE("break: a skipped routing weight in stage one fails h against the reference, "
          "MXFP8 h included",
          "[gpu][exec][break]") {
  for (auto dtype : {moe::DtypePath::a16w4, moe::DtypePath::a8w4}) {
    auto const r = check(small_shape(dtype, true), TestBreak::skip_routing_weight);
    INFO(moe::to_string(dtype) << ": " << r.detail);
    CHECK_FALSE(r.passed);
    CHECK_THAT(r.detail, Contains(gate(exec::gate_names::intermediate)));
    CHECK_THAT(r.detail, Contains(gate(exec::gate_names::output)));
  }
}

TEST_CASE("break: an output row never written fails write coverage (NaN sentinel)",
          "[gpu][exec][break]") {
  auto const shape = small_shape(moe::DtypePath::a16w4);
  auto const r = check(shape, TestBreak::unwritten_output_row);
  INFO(r.detail);
  CHECK_FALSE(r.passed);
  CHECK_THAT(r.detail, Contains(fmt::format("{} {} of {} y elements NaN/Inf", gate(exec::gate_names::write_coverage),
                                            shape.hidden, bucket_m * shape.hidden)));
}

TEST_CASE("break: an input changed by the kernel fails input preservation, and only it",
          "[gpu][exec][break]") {
  auto const shape = small_shape(moe::DtypePath::a16w4);
  auto const r = check(shape, TestBreak::corrupt_input, bucket_m, true);
  INFO(r.detail);
  CHECK_FALSE(r.passed);
  CHECK_THAT(r.detail, Contains(gate(exec::gate_names::input_preservation) +
                                " inputs (x, routing) were modified"));
  // The sort changes topk_ids after its last read of them: the result itself is right, so
  // nothing but the before/after hash can see this bug.
  CHECK_THAT(r.detail, !Contains(gate(exec::gate_names::output)));
  auto const unhashed = check(shape, TestBreak::corrupt_input, bucket_m, false);
  INFO(unhashed.detail);
  CHECK(unhashed.passed);
}

TEST_CASE("break: a bug above M=64 passes the bucket's own M and fails the boundary M",
          "[gpu][exec][break]") {
  auto const shape = small_shape(moe::DtypePath::a16w4);
  auto& r = rig(shape, {TestBreak::wrong_output_above_m, 64});
  exec::VerifyOptions options;
  options.bucket_ms = {bucket_m};
  auto const report = r.verifier->verify(r.pair.stage1, r.pair.stage2, options);
  CHECK_FALSE(report.passed());
  int boundary_failures = 0;
  for (auto const& c : report.checks) {
    INFO(c.name << ": " << c.detail);
    bool const above = c.name.starts_with("M=255 ") || c.name.starts_with("M=256 ") ||
                       c.name.starts_with("M=257 ");
    CHECK(c.passed == !above);
    if (above) {
      CHECK_THAT(c.name, Contains(std::string(exec::gate_names::boundary_m)));
      CHECK_THAT(c.detail, Contains(gate(exec::gate_names::output)));
      ++boundary_failures;
    }
  }
  CHECK(boundary_failures == 3);
  REQUIRE(report.first_failure() != nullptr);
  CHECK(report.first_failure()->name == "M=255 uniform (boundary M)");
}
