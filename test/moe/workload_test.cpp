#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/moe/workload.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {
MoeShape small_shape(DtypePath path, GateUpLayout layout = GateUpLayout::interleaved) {
  MoeShape s;
  s.tokens = 5;
  s.hidden = 64;
  s.inter = 96;
  s.logical_inter = 80;
  s.experts = 4;
  s.topk = 2;
  s.dtype = path;
  s.gate_up = layout;
  return s;
}
}  // namespace

TEST_CASE("workload buffers have the contract's sizes on every path", "[moe]") {
  auto const a16 = make_workload(small_shape(DtypePath::a16w4), {});
  CHECK(a16.x.x_bf16.size() == 5 * 64);
  CHECK(a16.x.x_codes.empty());
  CHECK(a16.w.w1_codes.size() == 4 * 192 * 32);   // [E][2I][H/2]
  CHECK(a16.w.w1_scales.size() == 4 * 192 * 2);   // [E][2I][H/32]
  CHECK(a16.w.w2_codes.size() == 4 * 64 * 48);    // [E][H][I/2]
  CHECK(a16.w.w2_scales.size() == 4 * 64 * 3);    // [E][H][I/32]
  CHECK(a16.w.w1_bf16.empty());
  CHECK(a16.routing.ids.size() == 10);
  CHECK_NOTHROW(check_workload(a16));

  auto a8_shape = small_shape(DtypePath::a8w4);
  a8_shape.fp8_flavor = Fp8Flavor::fnuz;
  auto const a8 = make_workload(a8_shape, {});
  CHECK(a8.x.x_codes.size() == 5 * 64);
  CHECK(a8.x.x_scales.size() == 5 * 2);
  CHECK(a8.x.x_bf16.empty());
  for (auto c : a8.x.x_codes) CHECK(c != 0x80);  // fnuz NaN never produced

  auto const bf = make_workload(small_shape(DtypePath::bf16), {});
  CHECK(bf.w.w1_bf16.size() == 4 * 192 * 64);
  CHECK(bf.w.w2_bf16.size() == 4 * 64 * 96);
  CHECK(bf.w.w1_codes.empty());
}

TEST_CASE("weights past logical_inter are exactly zero", "[moe]") {
  for (auto path : {DtypePath::a16w4, DtypePath::bf16}) {
    for (auto layout : {GateUpLayout::interleaved, GateUpLayout::separated}) {
      auto const s = small_shape(path, layout);
      auto const wl = make_workload(s, {});
      std::vector<double> row1(64), row2(96);
      for (int e = 0; e < s.experts; ++e) {
        for (std::int64_t j = 0; j < s.inter; ++j) {
          for (auto row : {gate_row(s, j), up_row(s, j)}) {
            decode_w1_row(s, wl.w, e, row, row1);
            bool const all_zero = std::all_of(row1.begin(), row1.end(), [](double v) { return v == 0; });
            CHECK(all_zero == (j >= 80));
          }
        }
        for (std::int64_t r = 0; r < s.hidden; ++r) {
          decode_w2_row(s, wl.w, e, r, row2);
          for (std::int64_t j = 80; j < 96; ++j) CHECK(row2[j] == 0.0);
          CHECK(std::any_of(row2.begin(), row2.begin() + 80, [](double v) { return v != 0; }));
        }
      }
      if (path == DtypePath::a16w4) {
        // A zero row is scale byte 127 and zero codes, per the quantisation rule.
        auto const row = gate_row(s, 90);
        CHECK(wl.w.w1_scales[static_cast<std::size_t>(row * 2)] == 127);
        CHECK(wl.w.w1_codes[static_cast<std::size_t>(row * 32)] == 0);
      }
    }
  }
}

TEST_CASE("gate/up layouts hold the same rows, permuted", "[moe]") {
  auto const inter = make_workload(small_shape(DtypePath::a16w4, GateUpLayout::interleaved), {});
  auto const sep = make_workload(small_shape(DtypePath::a16w4, GateUpLayout::separated), {});
  CHECK(inter.w.w1_codes != sep.w.w1_codes);
  CHECK(inter.w.w2_codes == sep.w.w2_codes);
  CHECK(inter.x.x_bf16 == sep.x.x_bf16);
  std::vector<double> a(64), b(64);
  for (int e = 0; e < 4; ++e) {
    for (std::int64_t j = 0; j < 96; ++j) {
      decode_w1_row(inter.shape, inter.w, e, 2 * j, a);
      decode_w1_row(sep.shape, sep.w, e, j, b);
      CHECK(a == b);
      decode_w1_row(inter.shape, inter.w, e, 2 * j + 1, a);
      decode_w1_row(sep.shape, sep.w, e, 96 + j, b);
      CHECK(a == b);
    }
  }
}

TEST_CASE("workloads are deterministic for a seed, whatever the thread count", "[moe]") {
  auto const s = small_shape(DtypePath::a16w4);
  auto const one = make_weights(s, 17, 1);
  auto const two = make_weights(s, 17, 2);
  auto const other = make_weights(s, 18, 2);
  CHECK(one.w1_codes == two.w1_codes);
  CHECK(one.w1_scales == two.w1_scales);
  CHECK(one.w2_codes == two.w2_codes);
  CHECK(one.w1_codes != other.w1_codes);
  CHECK(make_activations(s, 17).x_bf16 == make_activations(s, 17).x_bf16);
  CHECK(make_activations(s, 17).x_bf16 != make_activations(s, 18).x_bf16);
}

TEST_CASE("x on every path comes from the same values", "[moe]") {
  auto const s16 = small_shape(DtypePath::a16w4);
  auto s8 = small_shape(DtypePath::a8w4);
  auto const x16 = make_activations(s16, 3);
  auto const x8 = make_activations(s8, 3);
  std::vector<double> a(64), b(64);
  for (std::int64_t t = 0; t < s16.tokens; ++t) {
    auto const raw = raw_x_row(s16, 3, t);
    decode_x_row(s16, x16, t, a);
    decode_x_row(s8, x8, t, b);
    for (std::size_t i = 0; i < 64; ++i) {
      CHECK(std::fabs(a[i] - raw[i]) <= std::fabs(raw[i]) * 0x1.0p-8);
      // MXFP8 (3 mantissa bits) with a shared scale: within 1/16 of the block's amax (~3.5).
      CHECK(std::fabs(b[i] - raw[i]) <= 0.25);
    }
  }
}

TEST_CASE("weight values are scaled so that outputs stay O(1)", "[moe]") {
  MoeShape s;
  s.tokens = 1;
  s.hidden = 1024;
  s.inter = 256;
  s.experts = 2;
  s.topk = 1;
  auto const w = make_weights(s, 1, 0);
  std::vector<double> row(1024);
  double sum_sq = 0;
  for (std::int64_t r = 0; r < 2 * s.inter; ++r) {
    decode_w1_row(s, w, 0, r, row);
    for (double v : row) sum_sq += v * v;
  }
  double const rms = std::sqrt(sum_sq / (2.0 * 256 * 1024));
  // N(0, 1/H) before quantisation: rms 1/32; MXFP4 rounding moves it by some percent.
  CHECK(rms == Approx(1.0 / 32).epsilon(0.15));
}

TEST_CASE("check_workload catches mismatched buffers and routing", "[moe]") {
  auto wl = make_workload(small_shape(DtypePath::a16w4), {});
  auto broken = wl;
  broken.w.w2_scales.pop_back();
  CHECK_THROWS_WITH(check_workload(broken), Catch::Contains("w2_scales"));
  broken = wl;
  broken.routing.ids[3] = 4;
  CHECK_THROWS_WITH(check_workload(broken), Catch::Contains("topk_ids[1][1] = 4"));
  auto bad_shape = small_shape(DtypePath::a16w4);
  bad_shape.hidden = 48;
  CHECK_THROWS_AS(make_workload(bad_shape, {}), Error);
}
