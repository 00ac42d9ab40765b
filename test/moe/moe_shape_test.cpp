#include <catch2/catch.hpp>

#include <string>

#include "autotune/core/error.hpp"
#include "autotune/moe/moe_shape.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {
MoeShape backbone(std::int64_t m) {
  MoeShape s;
  s.tokens = m;
  s.hidden = 5120;
  s.inter = 640;
  s.experts = 384;
  s.topk = 6;
  return s;
}
bool mentions(const std::vector<std::string>& errors, const std::string& text) {
  for (auto const& e : errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("a valid shape has no validation errors", "[moe]") {
  CHECK(validation_errors(backbone(8)).empty());
  CHECK_NOTHROW(validate(backbone(8)));
  auto padded = backbone(8);
  padded.logical_inter = 576;
  CHECK(validation_errors(padded).empty());
  CHECK(to_string(padded) == "M=8 H=5120 I=640 (logical 576) E=384 topk=6 a16w4 interleaved "
                             "doweight_stage1=0");
}

TEST_CASE("shape validation gives every reason in words", "[moe]") {
  auto s = backbone(8);
  s.hidden = 100;
  s.inter = 48;
  s.logical_inter = 64;
  s.topk = 400;
  auto const errors = validation_errors(s);
  CHECK(errors.size() == 4);
  CHECK(mentions(errors, "hidden H=100 must be a multiple of 32"));
  CHECK(mentions(errors, "inter I=48 must be a multiple of 32"));
  CHECK(mentions(errors, "topk=400 exceeds experts E=384"));
  CHECK(mentions(errors, "logical_inter=64"));
  CHECK_THROWS_WITH(validate(s), Catch::Contains("invalid MoE shape") &&
                                     Catch::Contains("hidden H=100"));
  // The FP8 flavour follows the arch and is simply unused off the a8w4 path.
  auto fnuz_a16 = backbone(1);
  fnuz_a16.fp8_flavor = Fp8Flavor::fnuz;
  CHECK(validation_errors(fnuz_a16).empty());
}

TEST_CASE("gate and up rows follow the layout", "[moe]") {
  auto s = backbone(1);
  CHECK(gate_row(s, 5) == 10);
  CHECK(up_row(s, 5) == 11);
  s.gate_up = GateUpLayout::separated;
  CHECK(gate_row(s, 5) == 5);
  CHECK(up_row(s, 5) == 645);
}

TEST_CASE("dtype and layout names parse back", "[moe]") {
  for (auto p : {DtypePath::a16w4, DtypePath::a8w4, DtypePath::bf16}) {
    CHECK(parse_dtype_path(to_string(p)) == p);
  }
  CHECK(parse_gate_up_layout("separated") == GateUpLayout::separated);
  CHECK_THROWS_WITH(parse_dtype_path("fp8"), Catch::Contains("a16w4, a8w4 or bf16"));
}

TEST_CASE("byte counts match the FACTS.md roofline table", "[moe]") {
  // Backbone E384 top6 H5120 I640: M=1 touches 6 experts, 31 MB of MXFP4 weights.
  CHECK(weight_bytes_per_element(DtypePath::a16w4) == 0.53125);
  CHECK(expected_experts_touched(384, 6, 1) == Approx(6.0));
  auto const t1 = expected_moe_traffic(backbone(1));
  CHECK(t1.weight_bytes == Approx(6.0 * 3 * 640 * 5120 * 0.53125));
  CHECK(t1.weight_bytes / 1e6 == Approx(31.3).margin(0.1));
  CHECK(expected_experts_touched(384, 6, 8) == Approx(45.5).margin(0.05));
  CHECK(expected_moe_traffic(backbone(8)).weight_bytes / 1e6 == Approx(237).margin(0.5));
  CHECK(expected_experts_touched(384, 6, 512) == Approx(383.88).margin(0.01));  // table: 384
  // Draft E128 top3 at M=64: 100 experts.
  CHECK(expected_experts_touched(128, 3, 64) == Approx(100).margin(0.5));

  auto const t = moe_traffic(backbone(8), 40.0);
  CHECK(t.activation_bytes == 8.0 * 5120 * 2);
  CHECK(t.output_bytes == 8.0 * 5120 * 2);
  CHECK(t.intermediate_bytes == 2.0 * 48 * 640 * 2);
  CHECK(t.routing_bytes == 48.0 * 8);
  CHECK(t.total() == Approx(t.weight_bytes + t.activation_bytes + t.output_bytes +
                            t.intermediate_bytes + t.routing_bytes));
  auto a8 = backbone(8);
  a8.dtype = DtypePath::a8w4;
  CHECK(moe_traffic(a8, 40.0).activation_bytes == 8.0 * 5120 * (1 + 1.0 / 32));
  auto b = backbone(8);
  b.dtype = DtypePath::bf16;
  CHECK(moe_traffic(b, 1.0).weight_bytes == 3.0 * 640 * 5120 * 2);
}

TEST_CASE("FLOPs are 2*M*topk*(2I*H + H*I)", "[moe]") {
  CHECK(moe_flops(backbone(8)) == 2.0 * 8 * 6 * (2.0 * 640 * 5120 + 5120.0 * 640));
}
