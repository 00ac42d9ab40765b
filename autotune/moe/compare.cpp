#include "autotune/moe/compare.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::moe {

void Comparator::add(double value, double reference, std::int64_t row, std::int64_t col,
                     double allowance) {
  auto& r = m_result;
  ++r.checked;
  bool ok;
  if (!std::isfinite(value) || !std::isfinite(reference)) {
    ++r.non_finite;
    ok = false;
  } else {
    double const diff = std::fabs(value - reference);
    double const mag = std::fabs(reference);
    r.max_abs = std::fmax(r.max_abs, diff);
    // Relative error of a reference near zero says nothing (it is noise over a tiny value, and
    // atol covers it), so max_rel only counts elements the absolute term does not dominate.
    if (mag >= r.tolerance.atol && mag > 0) r.max_rel = std::fmax(r.max_rel, diff / mag);
    m_diff_sq += diff * diff;
    m_ref_sq += reference * reference;
    ok = diff <= r.tolerance.atol + r.tolerance.rtol * mag + allowance;
  }
  if (!ok) {
    ++r.failures;
    if (r.first_fail_row < 0) {
      r.first_fail_row = row;
      r.first_fail_col = col;
      r.first_fail_value = value;
      r.first_fail_ref = reference;
    }
  }
}

CompareResult Comparator::result() const {
  CompareResult r = m_result;
  if (m_ref_sq > 0) {
    r.rel_l2 = std::sqrt(m_diff_sq / m_ref_sq);
  } else {
    r.rel_l2 = m_diff_sq > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return r;
}

std::string CompareResult::summary() const {
  auto const figures = fmt::format(
      "max_abs {:.3g}, max_rel {:.3g}, rel_l2 {:.3g} (atol {:g}, rtol {:g}{}{})", max_abs, max_rel,
      rel_l2, tolerance.atol, tolerance.rtol, allowance.empty() ? "" : ", + ", allowance);
  if (checked == 0) return "FAIL nothing was compared";
  if (passed()) return fmt::format("PASS {} checked, {}", checked, figures);
  std::string text = fmt::format("FAIL {}/{} outside tolerance", failures, checked);
  if (non_finite > 0) text += fmt::format(", {} NaN/Inf", non_finite);
  text += fmt::format("; first at row {} col {}: {:.6g} vs ref {:.6g}; {}", first_fail_row,
                      first_fail_col, first_fail_value, first_fail_ref, figures);
  return text;
}

CompareResult compare_output(std::span<const std::uint16_t> gpu_y, const ReferenceRows& ref,
                             Tolerance tolerance) {
  auto const want = static_cast<std::size_t>(ref.total_tokens * ref.hidden);
  if (gpu_y.size() != want) {
    throw Error(fmt::format("compare_output: GPU output has {} elements, expected M*H = {}*{} = {}",
                            gpu_y.size(), ref.total_tokens, ref.hidden, want));
  }
  Comparator c(tolerance);
  for (std::size_t i = 0; i < ref.tokens.size(); ++i) {
    auto const t = ref.tokens[i];
    auto const expected = ref.y_row(i);
    for (std::int64_t col = 0; col < ref.hidden; ++col) {
      double const v = bf16_to_float(gpu_y[static_cast<std::size_t>(t * ref.hidden + col)]);
      c.add(v, expected[static_cast<std::size_t>(col)], t, col);
    }
  }
  return c.result();
}

CompareResult compare_intermediate_bf16(std::span<const std::uint16_t> gpu_h,
                                        const ReferenceRows& ref, Tolerance tolerance) {
  auto const want = static_cast<std::size_t>(ref.total_tokens * ref.topk * ref.inter);
  if (gpu_h.size() != want) {
    throw Error(fmt::format("compare_intermediate_bf16: GPU h has {} elements, expected "
                            "M*topk*I = {}*{}*{} = {}",
                            gpu_h.size(), ref.total_tokens, ref.topk, ref.inter, want));
  }
  Comparator c(tolerance);
  for (std::size_t i = 0; i < ref.tokens.size(); ++i) {
    for (int k = 0; k < ref.topk; ++k) {
      auto const slot = ref.tokens[i] * ref.topk + k;
      auto const expected = ref.h_row(i, k);
      for (std::int64_t col = 0; col < ref.inter; ++col) {
        double const v = bf16_to_float(gpu_h[static_cast<std::size_t>(slot * ref.inter + col)]);
        c.add(v, expected[static_cast<std::size_t>(col)], slot, col);
      }
    }
  }
  return c.result();
}

double e4m3_rounding_allowance(double reference, double block_amax, Fp8Flavor flavor) {
  constexpr int mantissa_bits = 3;
  double const subnormal_spacing = flavor == Fp8Flavor::ocp ? 0x1.0p-9 : 0x1.0p-10;
  double const largest_scale = 4.0 * std::fabs(block_amax) / e4m3_max(flavor);
  double spacing = subnormal_spacing * largest_scale;
  if (double const mag = std::fabs(reference); mag > 0 && std::isfinite(mag)) {
    int exponent = 0;
    (void)std::frexp(mag, &exponent);  // mag = f * 2^exponent, f in [0.5, 1)
    spacing = std::fmax(spacing, std::ldexp(1.0, exponent - 1 - mantissa_bits));
  }
  return 2.0 * spacing;
}

namespace {

// compare_intermediate_mxfp8's loop over the reference's slots, the GPU's dequantised element
// (slot, col) given by `value`.
template <class Value>
CompareResult compare_mxfp8_values(Fp8Flavor flavor, const ReferenceRows& ref, Tolerance tolerance,
                                   const Value& value) {
  Comparator c(tolerance, "2 e4m3 spacings at |ref|");
  for (std::size_t i = 0; i < ref.tokens.size(); ++i) {
    for (int k = 0; k < ref.topk; ++k) {
      auto const slot = ref.tokens[i] * ref.topk + k;
      auto const expected = ref.h_row(i, k);
      for (std::int64_t b = 0; b < ref.inter; b += mx_block) {
        double amax = 0;
        for (int j = 0; j < mx_block; ++j) {
          amax = std::fmax(amax, std::fabs(expected[static_cast<std::size_t>(b + j)]));
        }
        for (int j = 0; j < mx_block; ++j) {
          auto const col = b + j;
          double const r = expected[static_cast<std::size_t>(col)];
          c.add(value(slot, col), r, slot, col, e4m3_rounding_allowance(r, amax, flavor));
        }
      }
    }
  }
  return c.result();
}

// Whether every value of the block is e4m3 (of `flavor`) times 2^e for e = `e`.
bool block_on_grid(std::span<const double> block, int e, Fp8Flavor flavor) {
  for (double const v : block) {
    double const x = std::ldexp(v, -e);
    if (e4m3_decode(e4m3_encode(x, flavor), flavor) != x) return false;
  }
  return true;
}

}  // namespace

CompareResult compare_intermediate_mxfp8(std::span<const std::uint8_t> gpu_codes,
                                         std::span<const std::uint8_t> gpu_scales,
                                         Fp8Flavor flavor, const ReferenceRows& ref,
                                         Tolerance tolerance) {
  auto const want = static_cast<std::size_t>(ref.total_tokens * ref.topk * ref.inter);
  if (gpu_codes.size() != want || gpu_scales.size() != want / mx_block) {
    throw Error(fmt::format("compare_intermediate_mxfp8: GPU h has {} codes and {} scales, "
                            "expected M*topk*I = {}*{}*{} = {} and a 32nd of that",
                            gpu_codes.size(), gpu_scales.size(), ref.total_tokens, ref.topk,
                            ref.inter, want));
  }
  return compare_mxfp8_values(flavor, ref, tolerance, [&](std::int64_t slot, std::int64_t col) {
    auto const i = static_cast<std::size_t>(slot * ref.inter + col);
    return e4m3_decode(gpu_codes[i], flavor) * e8m0_decode(gpu_scales[i / mx_block]);
  });
}

CompareResult compare_intermediate_mxfp8_bf16(std::span<const std::uint16_t> gpu_h, Fp8Flavor flavor,
                                              const ReferenceRows& ref, Tolerance tolerance) {
  auto const want = static_cast<std::size_t>(ref.total_tokens * ref.topk * ref.inter);
  if (gpu_h.size() != want) {
    throw Error(fmt::format("compare_intermediate_mxfp8_bf16: GPU h has {} elements, expected M*topk*I = {}*{}*{} = {}",
                            gpu_h.size(), ref.total_tokens, ref.topk, ref.inter, want));
  }
  return compare_mxfp8_values(flavor, ref, tolerance, [&](std::int64_t slot, std::int64_t col) {
    return static_cast<double>(bf16_to_float(gpu_h[static_cast<std::size_t>(slot * ref.inter + col)]));
  });
}

std::int64_t count_blocks_off_mxfp8_grid(std::span<const std::uint16_t> h, std::int64_t inter, Fp8Flavor flavor) {
  if (inter % mx_block != 0 || h.size() % static_cast<std::size_t>(inter) != 0) {
    throw Error(fmt::format("count_blocks_off_mxfp8_grid: {} elements are not rows of I = {} (a multiple of 32)",
                            h.size(), inter));
  }
  MxElement const element = fp8_element(flavor);
  std::int64_t off = 0;
  std::vector<double> block(mx_block);
  for (std::size_t b = 0; b < h.size(); b += mx_block) {
    double amax = 0;
    for (int j = 0; j < mx_block; ++j) {
      block[static_cast<std::size_t>(j)] = bf16_to_float(h[b + static_cast<std::size_t>(j)]);
      amax = std::fmax(amax, std::fabs(block[static_cast<std::size_t>(j)]));
    }
    if (!std::isfinite(amax)) {
      ++off;
      continue;
    }
    // Blocks below 2^-100 are not checked: there bf16 cannot hold every value of the e4m3 grid
    // (its subnormals start at 2^-133), and no real activation block is that small.
    if (amax < 0x1p-100) continue;
    // The quantiser's exponent for the block's largest input; rounding can bring the largest
    // quantised value down to exactly emax * 2^(e-1), where the rule then gives e - 1.
    int const e = mx_scale_exponent(amax, element);
    if (!block_on_grid(block, e, flavor) && !block_on_grid(block, e + 1, flavor)) ++off;
  }
  return off;
}

double max_abs_difference(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (a.size() != b.size()) return inf;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double const x = bf16_to_float(a[i]);
    double const y = bf16_to_float(b[i]);
    if (!std::isfinite(x) || !std::isfinite(y)) return inf;
    worst = std::fmax(worst, std::fabs(x - y));
  }
  return worst;
}

}  // namespace moetune::moe
