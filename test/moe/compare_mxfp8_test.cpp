// The A8W4 intermediate comparison (compare_intermediate_mxfp8): GPU e4m3 codes and E8M0
// scales, dequantised, against the reference's h, with the stated e4m3 rounding allowance.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/moe/compare.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {

constexpr std::int64_t slots = 2;  // M=2, topk=1
constexpr std::int64_t inter = 64;

// Stage one's pre-rounding values: magnitudes spread over several binades, signs mixed.
std::vector<double> pre_rounding_h() {
  std::vector<double> v(static_cast<std::size_t>(slots * inter));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = (i % 3 == 0 ? -1.0 : 1.0) * std::ldexp(1.0 + 0.37 * static_cast<double>(i % 7), static_cast<int>(i % 9) - 6);
  }
  return v;
}

// The reference: every token sampled, h after the contract's rounding point.
ReferenceRows reference_of(const std::vector<double>& pre, Fp8Flavor flavor) {
  ReferenceRows r;
  r.total_tokens = slots;
  r.hidden = 32;
  r.inter = inter;
  r.topk = 1;
  r.tokens = {0, 1};
  r.y.assign(static_cast<std::size_t>(slots * 32), 0.0);
  r.h = pre;
  MoeShape shape;
  shape.dtype = DtypePath::a8w4;
  shape.fp8_flavor = flavor;
  for (std::int64_t s = 0; s < slots; ++s) {
    round_intermediate(shape, std::span(r.h).subspan(static_cast<std::size_t>(s * inter), inter));
  }
  return r;
}

// What a kernel writes for these pre-rounding values: codes and scales per 1x32.
struct GpuH {
  std::vector<std::uint8_t> codes, scales;
};
GpuH quantised(const std::vector<double>& pre, Fp8Flavor flavor) {
  GpuH out{std::vector<std::uint8_t>(pre.size()), std::vector<std::uint8_t>(pre.size() / 32)};
  for (std::int64_t s = 0; s < slots; ++s) {
    quantize_mxfp8_row(std::span(pre).subspan(static_cast<std::size_t>(s * inter), inter), flavor,
                       std::span(out.codes).subspan(static_cast<std::size_t>(s * inter), inter),
                       std::span(out.scales).subspan(static_cast<std::size_t>(s * inter / 32), inter / 32));
  }
  return out;
}

}  // namespace

TEST_CASE("e4m3 rounding allowance: two spacings at |ref|, floored by the block's subnormals",
          "[moe]") {
  // 3 mantissa bits: the spacing in [1, 2) is 1/8, in [2, 4) 1/4.
  CHECK(e4m3_rounding_allowance(1.0, 1.0, Fp8Flavor::ocp) == 0.25);
  CHECK(e4m3_rounding_allowance(-1.875, 2.0, Fp8Flavor::ocp) == 0.25);
  CHECK(e4m3_rounding_allowance(2.0, 2.0, Fp8Flavor::ocp) == 0.5);
  CHECK(e4m3_rounding_allowance(0.75, 1.0, Fp8Flavor::fnuz) == 0.125);
  // Zero in a block with amax 448: subnormal spacing 2^-9 at a scale of up to 4*448/448.
  CHECK(e4m3_rounding_allowance(0.0, 448.0, Fp8Flavor::ocp) == 2.0 * 0x1.0p-9 * 4.0);
  CHECK(e4m3_rounding_allowance(0.0, 240.0, Fp8Flavor::fnuz) == 2.0 * 0x1.0p-10 * 4.0);
  // Never more than a quarter of a normal reference's magnitude.
  for (double v : {0.1, 0.3, 1.0, 3.3, 100.0}) CHECK(e4m3_rounding_allowance(v, v, Fp8Flavor::ocp) <= v / 4);
}

TEST_CASE("MXFP8 h: the kernel's own quantisation of the same values passes exactly", "[moe]") {
  for (auto flavor : {Fp8Flavor::ocp, Fp8Flavor::fnuz}) {
    auto const pre = pre_rounding_h();
    auto const ref = reference_of(pre, flavor);
    auto const gpu = quantised(pre, flavor);
    auto const result = compare_intermediate_mxfp8(gpu.codes, gpu.scales, flavor, ref);
    INFO(result.summary());
    CHECK(result.passed());
    CHECK(result.checked == slots * inter);
    CHECK(result.max_abs == 0.0);
    CHECK(result.summary().find("2 e4m3 spacings at |ref|") != std::string::npos);
  }
}

TEST_CASE("MXFP8 h: values that differed slightly before rounding still pass", "[moe]") {
  // fp32 arithmetic on the GPU: pre-rounding values off by up to 1e-3 relative, so some land
  // on the neighbouring code (and block scales may flip where an amax sits at a boundary).
  auto pre = pre_rounding_h();
  auto const ref = reference_of(pre, Fp8Flavor::ocp);
  for (std::size_t i = 0; i < pre.size(); ++i) pre[i] *= 1.0 + (i % 2 == 0 ? 1e-3 : -1e-3);
  auto const gpu = quantised(pre, Fp8Flavor::ocp);
  auto const result = compare_intermediate_mxfp8(gpu.codes, gpu.scales, Fp8Flavor::ocp, ref);
  INFO(result.summary());
  CHECK(result.passed());
}

TEST_CASE("MXFP8 h: a wrong element, a NaN code and a NaN scale fail and are located", "[moe]") {
  auto const pre = pre_rounding_h();
  auto const ref = reference_of(pre, Fp8Flavor::ocp);
  SECTION("an element twice its value") {
    auto wrong = pre;
    wrong[static_cast<std::size_t>(inter + 40)] *= 2.0;  // slot 1, col 40; its block's amax grows too
    auto const gpu = quantised(wrong, Fp8Flavor::ocp);
    auto const result = compare_intermediate_mxfp8(gpu.codes, gpu.scales, Fp8Flavor::ocp, ref);
    CHECK_FALSE(result.passed());
    CHECK(result.first_fail_row == 1);
    CHECK(result.first_fail_col == 40);
  }
  SECTION("a NaN code (0x7F, an unwritten e4m3fn byte)") {
    auto gpu = quantised(pre, Fp8Flavor::ocp);
    gpu.codes[3] = 0x7F;
    auto const result = compare_intermediate_mxfp8(gpu.codes, gpu.scales, Fp8Flavor::ocp, ref);
    CHECK_FALSE(result.passed());
    CHECK(result.non_finite == 1);
  }
  SECTION("a NaN scale (0xFF) makes its whole block fail") {
    auto gpu = quantised(pre, Fp8Flavor::ocp);
    gpu.scales[2] = 0xFF;  // slot 1, cols 0..31
    auto const result = compare_intermediate_mxfp8(gpu.codes, gpu.scales, Fp8Flavor::ocp, ref);
    CHECK_FALSE(result.passed());
    CHECK(result.non_finite == 32);
    CHECK(result.first_fail_row == 1);
    CHECK(result.first_fail_col == 0);
  }
  SECTION("buffers of the wrong size are an error") {
    auto gpu = quantised(pre, Fp8Flavor::ocp);
    gpu.scales.pop_back();
    CHECK_THROWS_AS(compare_intermediate_mxfp8(gpu.codes, gpu.scales, Fp8Flavor::ocp, ref), Error);
  }
}

namespace {

// The same h as an A8W4 pair keeping h in bf16 (`_hb`) writes it: each code's value x 2^scale.
std::vector<std::uint16_t> as_bf16_values(const GpuH& q, Fp8Flavor flavor) {
  std::vector<std::uint16_t> out(q.codes.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = double_to_bf16(e4m3_decode(q.codes[i], flavor) * e8m0_decode(q.scales[i / 32]));
  }
  return out;
}

}  // namespace

TEST_CASE("MXFP8 values held in bf16: the same verdict as the codes, and the grid is checked", "[moe]") {
  for (auto flavor : {Fp8Flavor::ocp, Fp8Flavor::fnuz}) {
    INFO(to_string(flavor));
    auto const pre = pre_rounding_h();
    auto const ref = reference_of(pre, flavor);
    auto const q = quantised(pre, flavor);
    auto const h = as_bf16_values(q, flavor);
    auto const from_codes = compare_intermediate_mxfp8(q.codes, q.scales, flavor, ref);
    auto const from_bf16 = compare_intermediate_mxfp8_bf16(h, flavor, ref);
    CHECK(from_bf16.passed());
    CHECK(from_bf16.max_abs == from_codes.max_abs);
    CHECK(count_blocks_off_mxfp8_grid(h, inter, flavor) == 0);
    // The unquantised values round to bf16 fine and sit within the comparison's allowance,
    // but are not MXFP8 values: only the grid check tells that stage one skipped quantising.
    std::vector<std::uint16_t> raw(pre.size());
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = double_to_bf16(pre[i]);
    CHECK(compare_intermediate_mxfp8_bf16(raw, flavor, ref).passed());
    CHECK(count_blocks_off_mxfp8_grid(raw, inter, flavor) == slots * inter / 32);
    // One wrong element: that block alone.
    auto one = h;
    one[40] = double_to_bf16(bf16_to_float(one[40]) * 1.0078125);  // one more bf16 mantissa bit
    CHECK(count_blocks_off_mxfp8_grid(one, inter, flavor) == 1);
    // All-zero blocks and blocks too small for bf16 to hold the grid are on it by definition.
    std::vector<std::uint16_t> zeros(static_cast<std::size_t>(inter), 0);
    CHECK(count_blocks_off_mxfp8_grid(zeros, inter, flavor) == 0);
    // NaN is off the grid; a size that is not whole rows is an error.
    auto nan = h;
    nan[3] = 0x7fc0;
    CHECK(count_blocks_off_mxfp8_grid(nan, inter, flavor) == 1);
    CHECK_THROWS_AS(count_blocks_off_mxfp8_grid(std::span(h).first(40), inter, flavor), Error);
    CHECK_THROWS_AS(compare_intermediate_mxfp8_bf16(std::span(h).first(40), flavor, ref), Error);
  }
}
