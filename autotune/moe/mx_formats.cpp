#include "autotune/moe/mx_formats.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::moe {

namespace {

constexpr std::array<float, 16> e2m1_values = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,
                                                4.0f,  6.0f,  -0.0f, -0.5f, -1.0f, -1.5f,
                                                -2.0f, -3.0f, -4.0f, -6.0f};

// The e4m3 variants differ in bias, in where NaN lives and hence in the largest finite code.
struct E4m3Params {
  int bias;
  double max;
  std::uint8_t max_code;  // positive largest finite
  std::uint8_t nan_code;  // positive NaN (fnuz has only one)
};

constexpr E4m3Params params(Fp8Flavor flavor) {
  return flavor == Fp8Flavor::ocp ? E4m3Params{7, 448.0, 0x7E, 0x7F}
                                  : E4m3Params{8, 240.0, 0x7F, 0x80};
}

double e4m3_decode_slow(std::uint8_t bits, Fp8Flavor flavor) {
  auto const p = params(flavor);
  if (flavor == Fp8Flavor::ocp && (bits & 0x7F) == 0x7F) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (flavor == Fp8Flavor::fnuz && bits == 0x80) return std::numeric_limits<double>::quiet_NaN();
  int const exponent = (bits >> 3) & 0xF;
  int const mantissa = bits & 0x7;
  // Subnormals (exponent field 0) share the smallest normal binade's quantum 2^(1-bias-3).
  double const magnitude = exponent == 0 ? std::ldexp(mantissa, 1 - p.bias - 3)
                                         : std::ldexp(8 + mantissa, exponent - p.bias - 3);
  return (bits & 0x80) ? -magnitude : magnitude;
}

// Decoding is on the reference's hot path (every weight of every touched expert), so tables.
struct E4m3Tables {
  std::array<double, 256> ocp{};
  std::array<double, 256> fnuz{};
  E4m3Tables() {
    for (int b = 0; b < 256; ++b) {
      ocp[b] = e4m3_decode_slow(static_cast<std::uint8_t>(b), Fp8Flavor::ocp);
      fnuz[b] = e4m3_decode_slow(static_cast<std::uint8_t>(b), Fp8Flavor::fnuz);
    }
  }
};

const E4m3Tables& e4m3_tables() {
  static const E4m3Tables tables;
  return tables;
}

// Rounds a non-negative value with a few significant bits to the nearest integer, ties to
// even, without depending on the floating-point rounding mode.
double round_half_even(double n) {
  double const lower = std::floor(n);
  double const frac = n - lower;
  if (frac > 0.5) return lower + 1.0;
  if (frac < 0.5) return lower;
  return std::fmod(lower, 2.0) == 0.0 ? lower : lower + 1.0;
}

// Decision points are the midpoints between neighbours; at a midpoint the even code wins
// (codes 0,2,4,6 = 0,1,2,4), hence the alternating > / >=. Counting the thresholds passed,
// rather than branching, keeps random data free of mispredictions (weights are billions), and
// being visible here lets the row quantiser inline it.
inline std::uint8_t e2m1_encode_finite(double value) {
  double const a = std::fabs(value);
  auto const code = static_cast<std::uint8_t>((a > 0.25) + (a >= 0.75) + (a > 1.25) + (a >= 1.75) +
                                              (a > 2.5) + (a >= 3.5) + (a > 5.0));
  return std::signbit(value) ? static_cast<std::uint8_t>(code | 0x8) : code;
}

void require_finite_block(std::span<const double> block) {
  for (std::size_t i = 0; i < block.size(); ++i) {
    if (!std::isfinite(block[i])) {
      throw Error(fmt::format("MX quantisation: element {} of a block is {}; the block has no "
                              "valid scale",
                              i, block[i]));
    }
  }
}

void require_row_shape(std::size_t n, std::size_t codes, std::size_t codes_needed,
                       std::size_t scales, const char* what) {
  if (n % mx_block != 0 || codes != codes_needed || scales != n / mx_block) {
    throw Error(fmt::format("{}: row of {} values (must be a multiple of {}) with {} code bytes "
                            "(need {}) and {} scale bytes (need {})",
                            what, n, mx_block, codes, codes_needed, scales, n / mx_block));
  }
}

}  // namespace

// ---- bf16 -------------------------------------------------------------------------------

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bf16(float value) {
  auto const bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) {
    // Truncating could clear every mantissa bit and turn a NaN into an infinity; set the
    // quiet bit instead.
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040);
  }
  std::uint32_t const rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

std::uint16_t double_to_bf16(double value) {
  if (std::isnan(value)) return float_to_bf16(static_cast<float>(value));
  // Round to float with round-to-odd, then RNE to bf16. Round-to-odd keeps a sticky bit in the
  // float's last place, so the second rounding (16 bits coarser) sees ties exactly where the
  // double had them: one correctly rounded step.
  float f = static_cast<float>(value);
  if (std::isinf(f) && std::isfinite(value)) {
    f = std::copysign(std::numeric_limits<float>::max(), f);
  } else if (std::fabs(static_cast<double>(f)) > std::fabs(value)) {
    f = std::nextafter(f, 0.0f);
  }
  if (static_cast<double>(f) != value) {
    f = std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
  }
  return float_to_bf16(f);
}

// ---- e2m1 -------------------------------------------------------------------------------

float e2m1_decode(std::uint8_t code) { return e2m1_values[code & 0xF]; }

std::uint8_t e2m1_encode(double value) {
  if (std::isnan(value)) return 0;
  return e2m1_encode_finite(value);
}

// ---- e8m0 -------------------------------------------------------------------------------

double e8m0_decode(std::uint8_t bits) {
  if (bits == e8m0_nan) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(bits) - 127);
}

std::uint8_t e8m0_encode(int exponent) {
  if (exponent < -127) exponent = -127;
  if (exponent > 127) exponent = 127;
  return static_cast<std::uint8_t>(exponent + 127);
}

// ---- e4m3 -------------------------------------------------------------------------------

std::string_view to_string(Fp8Flavor flavor) {
  return flavor == Fp8Flavor::ocp ? "ocp" : "fnuz";
}

double e4m3_max(Fp8Flavor flavor) { return params(flavor).max; }

double e4m3_decode(std::uint8_t bits, Fp8Flavor flavor) {
  auto const& t = e4m3_tables();
  return flavor == Fp8Flavor::ocp ? t.ocp[bits] : t.fnuz[bits];
}

std::uint8_t e4m3_encode(double value, Fp8Flavor flavor) {
  auto const p = params(flavor);
  if (std::isnan(value)) {
    if (flavor == Fp8Flavor::fnuz) return p.nan_code;
    return std::signbit(value) ? 0xFF : 0x7F;
  }
  bool const negative = std::signbit(value);
  double const a = std::fabs(value);
  std::uint8_t code;
  if (a >= p.max) {
    code = p.max_code;
  } else {
    // Binade of a (a = 1.m * 2^e), floored at the smallest normal binade, whose quantum the
    // subnormals share. The quantum is 2^(e-3) (3 mantissa bits).
    int const min_exponent = 1 - p.bias;
    int frexp_exponent = 0;
    (void)std::frexp(a, &frexp_exponent);
    int exponent = frexp_exponent - 1;
    if (a == 0.0 || exponent < min_exponent) exponent = min_exponent;
    double const quantum = std::ldexp(1.0, exponent - 3);
    double const n = round_half_even(a / quantum);  // 0..16
    if (n * quantum > p.max) {
      code = p.max_code;  // rounding up past max would land on NaN (fn) or overflow (fnuz)
    } else if (n < 8) {
      code = static_cast<std::uint8_t>(n);  // only reachable in the subnormal binade
    } else if (n == 16) {
      code = static_cast<std::uint8_t>((exponent + 1 + p.bias) << 3);
    } else {
      code = static_cast<std::uint8_t>(((exponent + p.bias) << 3) | (static_cast<int>(n) - 8));
    }
  }
  if (code == 0) return (negative && flavor == Fp8Flavor::ocp) ? 0x80 : 0x00;
  return negative ? static_cast<std::uint8_t>(code | 0x80) : code;
}

// ---- block quantisation -----------------------------------------------------------------

MxElement fp8_element(Fp8Flavor flavor) {
  return flavor == Fp8Flavor::ocp ? MxElement::e4m3fn : MxElement::e4m3fnuz;
}

double mx_element_max(MxElement element) {
  switch (element) {
    case MxElement::e2m1: return 6.0;
    case MxElement::e4m3fn: return 448.0;
    case MxElement::e4m3fnuz: return 240.0;
  }
  return 0.0;
}

int mx_scale_exponent(double amax, MxElement element) {
  double const emax = mx_element_max(element);
  // frexp gives ceil(log2(amax/emax)) up to the rounding of the division; the two loops make
  // it exact, since emax * 2^e is exact in double and the comparisons are exact.
  int e = 0;
  (void)std::frexp(amax / emax, &e);
  while (amax > std::ldexp(emax, e)) ++e;
  while (e > -1100 && amax <= std::ldexp(emax, e - 1)) --e;
  if (e < -127) e = -127;
  if (e > 127) e = 127;
  return e;
}

std::uint8_t mx_scale_byte(std::span<const double> block, MxElement element) {
  require_finite_block(block);
  double amax = 0.0;
  for (double v : block) {
    double const a = std::fabs(v);
    amax = a > amax ? a : amax;  // not std::fmax: a libm call, and NaN was excluded above
  }
  if (amax == 0.0) return 127;
  return e8m0_encode(mx_scale_exponent(amax, element));
}

void quantize_mxfp4_row(std::span<const double> row, std::span<std::uint8_t> codes,
                        std::span<std::uint8_t> scales) {
  require_row_shape(row.size(), codes.size(), row.size() / 2, scales.size(), "quantize_mxfp4_row");
  for (std::size_t b = 0; b < scales.size(); ++b) {
    auto const block = row.subspan(b * mx_block, mx_block);
    std::uint8_t const scale = mx_scale_byte(block, MxElement::e2m1);
    scales[b] = scale;
    double const inverse = std::ldexp(1.0, 127 - static_cast<int>(scale));
    for (int i = 0; i < mx_block; i += 2) {
      auto const lo = e2m1_encode_finite(block[i] * inverse);
      auto const hi = e2m1_encode_finite(block[i + 1] * inverse);
      codes[(b * mx_block + i) / 2] = static_cast<std::uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_mxfp8_row(std::span<const double> row, Fp8Flavor flavor,
                        std::span<std::uint8_t> codes, std::span<std::uint8_t> scales) {
  require_row_shape(row.size(), codes.size(), row.size(), scales.size(), "quantize_mxfp8_row");
  for (std::size_t b = 0; b < scales.size(); ++b) {
    auto const block = row.subspan(b * mx_block, mx_block);
    std::uint8_t const scale = mx_scale_byte(block, fp8_element(flavor));
    scales[b] = scale;
    double const inverse = std::ldexp(1.0, 127 - static_cast<int>(scale));
    for (int i = 0; i < mx_block; ++i) {
      codes[b * mx_block + i] = e4m3_encode(block[i] * inverse, flavor);
    }
  }
}

void dequantize_mxfp4_row(std::span<const std::uint8_t> codes,
                          std::span<const std::uint8_t> scales, std::span<double> out) {
  require_row_shape(out.size(), codes.size(), out.size() / 2, scales.size(),
                    "dequantize_mxfp4_row");
  for (std::size_t b = 0; b < scales.size(); ++b) {
    double const scale = e8m0_decode(scales[b]);
    for (int i = 0; i < mx_block; i += 2) {
      std::uint8_t const byte = codes[(b * mx_block + i) / 2];
      out[b * mx_block + i] = e2m1_values[byte & 0xF] * scale;
      out[b * mx_block + i + 1] = e2m1_values[byte >> 4] * scale;
    }
  }
}

void dequantize_mxfp8_row(std::span<const std::uint8_t> codes,
                          std::span<const std::uint8_t> scales, Fp8Flavor flavor,
                          std::span<double> out) {
  require_row_shape(out.size(), codes.size(), out.size(), scales.size(), "dequantize_mxfp8_row");
  auto const& table = flavor == Fp8Flavor::ocp ? e4m3_tables().ocp : e4m3_tables().fnuz;
  for (std::size_t b = 0; b < scales.size(); ++b) {
    double const scale = e8m0_decode(scales[b]);
    for (int i = 0; i < mx_block; ++i) {
      out[b * mx_block + i] = table[codes[b * mx_block + i]] * scale;
    }
  }
}

MxMatrix quantize_mx(std::span<const double> values, std::int64_t rows, std::int64_t cols,
                     MxElement element) {
  if (rows < 0 || cols < 0 || cols % mx_block != 0 ||
      static_cast<std::int64_t>(values.size()) != rows * cols) {
    throw Error(fmt::format("quantize_mx: {} values for a {}x{} matrix (columns must be a "
                            "multiple of {})",
                            values.size(), rows, cols, mx_block));
  }
  MxMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.element = element;
  std::int64_t const row_bytes = element == MxElement::e2m1 ? cols / 2 : cols;
  m.codes.resize(static_cast<std::size_t>(rows * row_bytes));
  m.scales.resize(static_cast<std::size_t>(rows * (cols / mx_block)));
  for (std::int64_t r = 0; r < rows; ++r) {
    auto const row = values.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
    auto const codes = std::span(m.codes).subspan(static_cast<std::size_t>(r * row_bytes),
                                                  static_cast<std::size_t>(row_bytes));
    auto const scales = std::span(m.scales).subspan(static_cast<std::size_t>(r * (cols / mx_block)),
                                                    static_cast<std::size_t>(cols / mx_block));
    if (element == MxElement::e2m1) {
      quantize_mxfp4_row(row, codes, scales);
    } else {
      quantize_mxfp8_row(row, element == MxElement::e4m3fn ? Fp8Flavor::ocp : Fp8Flavor::fnuz,
                         codes, scales);
    }
  }
  return m;
}

std::vector<double> dequantize_mx(const MxMatrix& m) {
  std::vector<double> out(static_cast<std::size_t>(m.rows * m.cols));
  std::int64_t const row_bytes = m.element == MxElement::e2m1 ? m.cols / 2 : m.cols;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    auto const row = std::span(out).subspan(static_cast<std::size_t>(r * m.cols),
                                            static_cast<std::size_t>(m.cols));
    auto const codes = std::span(m.codes).subspan(static_cast<std::size_t>(r * row_bytes),
                                                  static_cast<std::size_t>(row_bytes));
    auto const scales = std::span(m.scales).subspan(
        static_cast<std::size_t>(r * (m.cols / mx_block)), static_cast<std::size_t>(m.cols / mx_block));
    if (m.element == MxElement::e2m1) {
      dequantize_mxfp4_row(codes, scales, row);
    } else {
      dequantize_mxfp8_row(codes, scales,
                           m.element == MxElement::e4m3fn ? Fp8Flavor::ocp : Fp8Flavor::fnuz, row);
    }
  }
  return out;
}

}  // namespace moetune::moe
