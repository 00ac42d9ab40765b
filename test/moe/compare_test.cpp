#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/moe/compare.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {
// A reference for M=4, H=32 over tokens {1, 3}, with y = 0.1*(col+1) (token 1) and -y (token 3).
ReferenceRows small_reference() {
  ReferenceRows r;
  r.total_tokens = 4;
  r.hidden = 32;
  r.inter = 32;
  r.topk = 1;
  r.tokens = {1, 3};
  for (int i = 0; i < 2; ++i) {
    for (int c = 0; c < 32; ++c) r.y.push_back((i == 0 ? 0.1 : -0.1) * (c + 1));
  }
  r.h.assign(2 * 32, 0.5);
  return r;
}
// The GPU answer: the reference rounded to bf16, unsampled rows garbage (NaN).
std::vector<std::uint16_t> gpu_answer(const ReferenceRows& r) {
  std::vector<std::uint16_t> y(4 * 32, float_to_bf16(std::nanf("")));
  for (std::size_t i = 0; i < r.tokens.size(); ++i) {
    for (int c = 0; c < 32; ++c) {
      y[static_cast<std::size_t>(r.tokens[i] * 32 + c)] = double_to_bf16(r.y_row(i)[static_cast<std::size_t>(c)]);
    }
  }
  return y;
}
}  // namespace

TEST_CASE("a bf16-rounded reference passes and only sampled rows are checked", "[moe]") {
  auto const ref = small_reference();
  auto const result = compare_output(gpu_answer(ref), ref);
  CHECK(result.passed());
  CHECK(result.checked == 64);
  CHECK(result.failures == 0);
  CHECK(result.max_abs > 0);
  CHECK(result.max_abs < 0.02);
  CHECK(result.max_rel <= 0x1.0p-8);
  CHECK(result.rel_l2 < 0x1.0p-8);
  CHECK(result.summary().starts_with("PASS 64 checked"));
}

TEST_CASE("elements outside atol + rtol*|ref| fail and are located", "[moe]") {
  auto const ref = small_reference();
  auto y = gpu_answer(ref);
  // token 3, col 9: ref -1.0, bound 0.02 + 0.02 = 0.04. -1.0625 is outside, -1.03125 inside.
  y[3 * 32 + 9] = float_to_bf16(-1.0625f);
  y[1 * 32 + 4] = float_to_bf16(0.5f + 0.015625f);  // ref 0.5, bound 0.03: inside
  auto const result = compare_output(y, ref);
  CHECK_FALSE(result.passed());
  CHECK(result.failures == 1);
  CHECK(result.non_finite == 0);
  CHECK(result.first_fail_row == 3);
  CHECK(result.first_fail_col == 9);
  CHECK(result.max_abs == Approx(0.0625));
  CHECK(result.summary().starts_with("FAIL 1/64 outside tolerance; first at row 3 col 9"));
  // A looser tolerance lets it through.
  CHECK(compare_output(y, ref, {.atol = 0.05, .rtol = 0.02}).passed());
}

TEST_CASE("NaN or Inf in a checked element fails", "[moe]") {
  auto const ref = small_reference();
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity()}) {
    auto y = gpu_answer(ref);
    y[1 * 32 + 31] = float_to_bf16(bad);
    auto const result = compare_output(y, ref);
    CHECK_FALSE(result.passed());
    CHECK(result.non_finite == 1);
    CHECK(result.failures == 1);
    CHECK(std::isfinite(result.max_abs));
    CHECK(result.summary().find("1 NaN/Inf") != std::string::npos);
  }
}

TEST_CASE("compare_output rejects a buffer of the wrong size", "[moe]") {
  auto const ref = small_reference();
  std::vector<std::uint16_t> y(4 * 32 - 1);
  CHECK_THROWS_WITH(compare_output(y, ref), Catch::Contains("expected M*H"));
}

TEST_CASE("intermediate comparison reads rows by slot", "[moe]") {
  auto const ref = small_reference();
  std::vector<std::uint16_t> h(4 * 32, float_to_bf16(0.5f));
  CHECK(compare_intermediate_bf16(h, ref).passed());
  h[3 * 32 + 0] = float_to_bf16(0.75f);  // slot 3 = token 3, k 0
  auto const result = compare_intermediate_bf16(h, ref);
  CHECK(result.failures == 1);
  CHECK(result.first_fail_row == 3);
  h[3 * 32 + 0] = float_to_bf16(0.5f);
  h[2 * 32 + 0] = float_to_bf16(99.0f);  // token 2 is not sampled
  CHECK(compare_intermediate_bf16(h, ref).passed());
}

TEST_CASE("max_abs_difference between two GPU outputs", "[moe]") {
  std::vector<std::uint16_t> a{float_to_bf16(1.0f), float_to_bf16(-2.0f), float_to_bf16(0.5f)};
  auto b = a;
  CHECK(max_abs_difference(a, b) == 0.0);
  b[1] = float_to_bf16(-2.015625f);
  CHECK(max_abs_difference(a, b) == 0.015625);
  b[2] = float_to_bf16(std::nanf(""));
  CHECK(std::isinf(max_abs_difference(a, b)));
  b.pop_back();
  CHECK(std::isinf(max_abs_difference(a, b)));
}

TEST_CASE("AITER's err is the mismatch share under checkAllclose's tolerance", "[moe]") {
  auto const ref = small_reference();
  auto y = gpu_answer(ref);
  // token 1, col 19: ref 2.0. AITER's bound 0.01 + 0.01 * 2 = 0.03, ours 0.06: 2.03125 passes
  // our gate and is one of AITER's mismatches.
  y[1 * 32 + 19] = float_to_bf16(2.03125f);
  CHECK(aiter_err_tolerance.atol == 0.01);
  CHECK(aiter_err_tolerance.rtol == 0.01);
  CHECK(compare_output(y, ref).passed());
  auto const aiter = compare_output(y, ref, aiter_err_tolerance);
  CHECK(aiter.failures == 1);
  CHECK(aiter.mismatch_share() == Approx(1.0 / 64));
  CHECK(compare_output(gpu_answer(ref), ref, aiter_err_tolerance).mismatch_share() == 0.0);
  // A NaN counts as a mismatch; nothing compared is "all wrong", not "all right".
  y[3 * 32 + 0] = float_to_bf16(std::nanf(""));
  CHECK(compare_output(y, ref, aiter_err_tolerance).mismatch_share() == Approx(2.0 / 64));
  CHECK(CompareResult{}.mismatch_share() == 1.0);
}
