#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/moe/reference.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {

WorkloadOptions seeded(std::uint64_t seed) {
  WorkloadOptions options;
  options.seed = seed;
  return options;
}

// One token, one expert, H = I = 32, built by hand so that every value is known:
//   x = 0.5 everywhere;
//   gate_0 = 0.0625, up_0 = 0.125, gate_1 = -0.0625, up_1 = 0.0625 (whole rows), rest zero
//     -> gate/up dot products g0 = 1, u0 = 2, g1 = -1, u1 = 1;
//   w2[r][0] = 1, w2[r][1] = +1 for even r, -1 for odd r, rest zero;
//   routing weight 0.3.
// All these values are exact in MXFP4 (a block of equal values c = 2^k quantises to code 4).
Workload hand_workload(GateUpLayout layout, bool doweight) {
  MoeShape s;
  s.tokens = 1;
  s.hidden = 32;
  s.inter = 32;
  s.experts = 1;
  s.topk = 1;
  s.gate_up = layout;
  s.doweight_stage1 = doweight;
  Workload wl;
  wl.shape = s;
  wl.x.x_bf16.assign(32, float_to_bf16(0.5f));
  std::vector<double> w1(64 * 32, 0.0);
  auto const fill = [&](std::int64_t row, double v) {
    for (int i = 0; i < 32; ++i) w1[static_cast<std::size_t>(row * 32 + i)] = v;
  };
  fill(gate_row(s, 0), 0.0625);
  fill(up_row(s, 0), 0.125);
  fill(gate_row(s, 1), -0.0625);
  fill(up_row(s, 1), 0.0625);
  auto const q1 = quantize_mx(w1, 64, 32, MxElement::e2m1);
  wl.w.w1_codes = q1.codes;
  wl.w.w1_scales = q1.scales;
  std::vector<double> w2(32 * 32, 0.0);
  for (int r = 0; r < 32; ++r) {
    w2[static_cast<std::size_t>(r * 32)] = 1.0;
    w2[static_cast<std::size_t>(r * 32 + 1)] = r % 2 == 0 ? 1.0 : -1.0;
  }
  auto const q2 = quantize_mx(w2, 32, 32, MxElement::e2m1);
  wl.w.w2_codes = q2.codes;
  wl.w.w2_scales = q2.scales;
  wl.routing.tokens = 1;
  wl.routing.experts = 1;
  wl.routing.topk = 1;
  wl.routing.ids = {0};
  wl.routing.weights = {0.3f};
  return wl;
}

MoeShape random_shape(DtypePath path) {
  MoeShape s;
  s.tokens = 9;
  s.hidden = 128;
  s.inter = 96;
  s.logical_inter = 70;
  s.experts = 6;
  s.topk = 3;
  s.dtype = path;
  return s;
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return std::sqrt(d / n);
}

}  // namespace

TEST_CASE("reference on a hand-worked tiny layer, weight in stage two", "[moe]") {
  for (auto layout : {GateUpLayout::interleaved, GateUpLayout::separated}) {
    auto const wl = hand_workload(layout, false);
    std::vector<std::int64_t> const tokens{0};
    auto const ref = reference_rows(wl, tokens);
    // h0 = silu(1)*2 = 1.46211715726 -> bf16 1.4609375 (187/128);
    // h1 = silu(-1)*1 = -0.26894142137 -> bf16 -0.26953125 (-138/512).
    CHECK(ref.h_row(0, 0)[0] == 1.4609375);
    CHECK(ref.h_row(0, 0)[1] == -0.26953125);
    for (int j = 2; j < 32; ++j) CHECK(ref.h_row(0, 0)[static_cast<std::size_t>(j)] == 0.0);
    double const w = static_cast<double>(0.3f);
    for (int r = 0; r < 32; ++r) {
      double const expected = w * (r % 2 == 0 ? 1.4609375 - 0.26953125 : 1.4609375 + 0.26953125);
      CHECK(ref.y_row(0)[static_cast<std::size_t>(r)] == Approx(expected).epsilon(1e-15));
    }
  }
}

TEST_CASE("reference on a hand-worked tiny layer, weight in stage one", "[moe]") {
  auto const wl = hand_workload(GateUpLayout::interleaved, true);
  std::vector<std::int64_t> const tokens{0};
  auto const ref = reference_rows(wl, tokens);
  // The weight is applied before the bf16 rounding:
  // 0.3 * 1.46211715726 = 0.43863516 -> 225/512 = 0.439453125;
  // 0.3 * -0.26894142137 = -0.08068243 -> -165/2048 = -0.08056640625.
  CHECK(ref.h_row(0, 0)[0] == 0.439453125);
  CHECK(ref.h_row(0, 0)[1] == -0.08056640625);
  CHECK(ref.y_row(0)[0] == Approx(0.439453125 - 0.08056640625).epsilon(1e-15));
  CHECK(ref.y_row(0)[1] == Approx(0.439453125 + 0.08056640625).epsilon(1e-15));
  // ...which differs measurably from weighting in stage two.
  auto const late = reference_rows(hand_workload(GateUpLayout::interleaved, false), tokens);
  CHECK(std::fabs(late.y_row(0)[0] - ref.y_row(0)[0]) > 1e-4);
}

TEST_CASE("interleaved and separated layouts give the same reference", "[moe]") {
  for (auto path : {DtypePath::a16w4, DtypePath::a8w4, DtypePath::bf16}) {
    CAPTURE(to_string(path));
    auto s = random_shape(path);
    s.gate_up = GateUpLayout::interleaved;
    auto const a = make_workload(s, seeded(5));
    s.gate_up = GateUpLayout::separated;
    auto const b = make_workload(s, seeded(5));
    auto const tokens = sample_tokens(s.tokens, 0);
    auto const ra = reference_rows(a, tokens);
    auto const rb = reference_rows(b, tokens);
    CHECK(ra.y == rb.y);
    CHECK(ra.h == rb.h);
  }
}

TEST_CASE("doweight_stage1 only moves y by the rounding of h", "[moe]") {
  auto s = random_shape(DtypePath::a16w4);
  auto const late = make_workload(s, seeded(2));
  s.doweight_stage1 = true;
  auto const early = make_workload(s, seeded(2));
  auto const tokens = sample_tokens(s.tokens, 0);
  auto const rl = reference_rows(late, tokens);
  auto const re = reference_rows(early, tokens);
  CHECK(rl.y != re.y);
  CHECK(rel_l2(re.y, rl.y) < 0.01);  // bf16 rounding of h: ~0.2 % per element
}

TEST_CASE("the a8w4 intermediate is MXFP8 of the shape's flavour", "[moe]") {
  for (auto flavour : {Fp8Flavor::ocp, Fp8Flavor::fnuz}) {
    auto s = random_shape(DtypePath::a8w4);
    s.fp8_flavor = flavour;
    auto const wl = make_workload(s, seeded(4));
    auto const tokens = sample_tokens(s.tokens, 0);
    auto const ref = reference_rows(wl, tokens);
    // Re-quantising a rounded row changes nothing: the values lie on the MXFP8 grid.
    std::vector<double> row(ref.h.begin(), ref.h.begin() + 96);
    auto const before = row;
    round_intermediate(s, row);
    CHECK(row == before);
    // A8W4 stays close to A16W4 on the same underlying values (FP8 x and h: a few percent).
    auto s16 = s;
    s16.dtype = DtypePath::a16w4;
    s16.fp8_flavor = Fp8Flavor::ocp;
    auto const ref16 = reference_rows(make_workload(s16, seeded(4)), tokens);
    CHECK(rel_l2(ref.y, ref16.y) < 0.1);
    CHECK(ref.y != ref16.y);
  }
}

TEST_CASE("reference rows of a subset equal those of the whole, whatever the threads", "[moe]") {
  auto const wl = make_workload(random_shape(DtypePath::a16w4), seeded(8));
  auto const all = sample_tokens(wl.shape.tokens, 0);
  REQUIRE(all.size() == 9);
  auto const full = reference_rows(wl, all, {.threads = 1});
  auto const threaded = reference_rows(wl, all, {.threads = 3});
  CHECK(full.y == threaded.y);
  std::vector<std::int64_t> const some{7, 2, 7};
  auto const part = reference_rows(wl, some, {.threads = 2});
  for (std::size_t i = 0; i < some.size(); ++i) {
    auto const a = part.y_row(i);
    auto const b = full.y_row(static_cast<std::size_t>(some[i]));
    CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
  CHECK_THROWS_WITH(reference_rows(wl, std::vector<std::int64_t>{9}),
                    Catch::Contains("token 9 is outside [0, M=9)"));
}

TEST_CASE("reference outputs are O(1) for the synthetic workload", "[moe]") {
  auto const wl = make_workload(random_shape(DtypePath::a16w4), seeded(1));
  auto const ref = reference_rows(wl, sample_tokens(wl.shape.tokens, 0));
  double sum_sq = 0;
  for (double v : ref.y) {
    REQUIRE(std::isfinite(v));
    sum_sq += v * v;
  }
  double const rms = std::sqrt(sum_sq / static_cast<double>(ref.y.size()));
  CHECK(rms > 0.05);
  CHECK(rms < 2.0);
}

TEST_CASE("token sample: all when M <= 64, else 64 seeded plus first and last", "[moe]") {
  CHECK(sample_tokens(1, 0) == std::vector<std::int64_t>{0});
  CHECK(sample_tokens(64, 0).size() == 64);
  CHECK(sample_tokens(65, 0).size() == 65);  // interior of 63 < 64: everything
  auto const s = sample_tokens(1000, 7);
  REQUIRE(s.size() == 66);
  CHECK(s.front() == 0);
  CHECK(s.back() == 999);
  CHECK(std::is_sorted(s.begin(), s.end()));
  CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
  CHECK(sample_tokens(1000, 7) == s);
  CHECK(sample_tokens(1000, 8) != s);
  auto const big = sample_tokens(1 << 20, 3);
  CHECK(big.size() == 66);
  CHECK(big.back() == (1 << 20) - 1);
}
