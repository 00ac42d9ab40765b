#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "autotune/core/error.hpp"
#include "autotune/moe/mx_formats.hpp"
#include "autotune/moe/random.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {
float float_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }
std::vector<double> block_of(std::initializer_list<double> head) {
  std::vector<double> block(mx_block, 0.0);
  std::size_t i = 0;
  for (double v : head) block[i++] = v;
  return block;
}
}  // namespace

TEST_CASE("bf16 rounds to nearest, ties to even", "[moe]") {
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_bf16(-2.0f) == 0xC000);
  // 1 + 2^-8 is halfway between 1 (0x3F80, even) and 1 + 2^-7 (0x3F81): stays at 1.
  CHECK(float_to_bf16(1.0f + 0x1.0p-8f) == 0x3F80);
  // 1 + 3*2^-8 is halfway between 0x3F81 (odd) and 0x3F82 (even): goes up.
  CHECK(float_to_bf16(1.0f + 3 * 0x1.0p-8f) == 0x3F82);
  // Just above halfway goes up.
  CHECK(float_to_bf16(1.0f + 0x1.0p-8f + 0x1.0p-20f) == 0x3F81);
  // Largest float rounds past bf16's largest finite value to infinity.
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7F80);
  CHECK(bf16_to_float(0x3F81) == 1.0f + 0x1.0p-7f);
}

TEST_CASE("bf16 keeps NaN a NaN, with its sign", "[moe]") {
  // A NaN whose payload lives only in the low 16 bits would truncate to infinity.
  auto const low_payload = float_to_bf16(float_bits(0x7F800001u));
  CHECK(std::isnan(bf16_to_float(low_payload)));
  auto const negative = float_to_bf16(float_bits(0xFFC00000u));
  CHECK(std::isnan(bf16_to_float(negative)));
  CHECK((negative & 0x8000) != 0);
  CHECK(std::isinf(bf16_to_float(float_to_bf16(std::numeric_limits<float>::infinity()))));
}

TEST_CASE("double_to_bf16 rounds once, not twice through float", "[moe]") {
  // Through float, 1 + 2^-8 + 2^-40 first becomes the tie 1 + 2^-8 and then rounds down to 1;
  // it is above the tie, so the correct result is 1 + 2^-7.
  CHECK(double_to_bf16(1.0 + 0x1.0p-8 + 0x1.0p-40) == 0x3F81);
  CHECK(double_to_bf16(1.0 + 0x1.0p-8) == 0x3F80);
  CHECK(double_to_bf16(-(1.0 + 3 * 0x1.0p-8)) == 0xBF82);
  CHECK(double_to_bf16(1e39) == 0x7F80);
  CHECK(double_to_bf16(1e-60) == 0x0000);
  CHECK(std::isnan(bf16_to_float(double_to_bf16(std::nan("")))));
  CHECK(round_to_bf16(0.1) == static_cast<double>(bf16_to_float(float_to_bf16(0.1f))));
}

TEST_CASE("every e2m1 code decodes to the table value and encodes back", "[moe]") {
  float const table[16] = {0, .5, 1, 1.5, 2, 3, 4, 6, -0.0f, -.5, -1, -1.5, -2, -3, -4, -6};
  for (int c = 0; c < 16; ++c) {
    CAPTURE(c);
    CHECK(e2m1_decode(static_cast<std::uint8_t>(c)) == table[c]);
    CHECK(std::signbit(e2m1_decode(static_cast<std::uint8_t>(c))) == (c >= 8));
    CHECK(e2m1_encode(table[c]) == c);
  }
}

TEST_CASE("e2m1 encodes to nearest, ties to even, saturating at 6", "[moe]") {
  CHECK(e2m1_encode(0.25) == 0);   // 0 | 0.5 -> 0
  CHECK(e2m1_encode(0.26) == 1);
  CHECK(e2m1_encode(0.75) == 2);   // 0.5 | 1 -> 1
  CHECK(e2m1_encode(1.25) == 2);   // 1 | 1.5 -> 1
  CHECK(e2m1_encode(1.75) == 4);   // 1.5 | 2 -> 2
  CHECK(e2m1_encode(2.5) == 4);    // 2 | 3 -> 2
  CHECK(e2m1_encode(2.6) == 5);
  CHECK(e2m1_encode(3.5) == 6);    // 3 | 4 -> 4
  CHECK(e2m1_encode(5.0) == 6);    // 4 | 6 -> 4
  CHECK(e2m1_encode(5.01) == 7);
  CHECK(e2m1_encode(7.0) == 7);
  CHECK(e2m1_encode(1e9) == 7);
  CHECK(e2m1_encode(-1e9) == 15);
  CHECK(e2m1_encode(-0.75) == 10);
  CHECK(e2m1_encode(-0.1) == 8);   // rounds to -0: sign kept
}

TEST_CASE("e8m0 decodes powers of two and encodes clamped exponents", "[moe]") {
  CHECK(e8m0_decode(127) == 1.0);
  CHECK(e8m0_decode(128) == 2.0);
  CHECK(e8m0_decode(0) == std::ldexp(1.0, -127));
  CHECK(e8m0_decode(254) == std::ldexp(1.0, 127));
  CHECK(std::isnan(e8m0_decode(255)));
  CHECK(e8m0_encode(0) == 127);
  CHECK(e8m0_encode(-3) == 124);
  CHECK(e8m0_encode(-500) == 0);
  CHECK(e8m0_encode(500) == 254);
}

TEST_CASE("e4m3 OCP (fn): max, subnormals, NaN, saturation, ties", "[moe]") {
  auto const fn = Fp8Flavor::ocp;
  CHECK(e4m3_max(fn) == 448.0);
  CHECK(e4m3_decode(0x7E, fn) == 448.0);
  CHECK(e4m3_decode(0xFE, fn) == -448.0);
  CHECK(std::isnan(e4m3_decode(0x7F, fn)));
  CHECK(std::isnan(e4m3_decode(0xFF, fn)));
  CHECK(e4m3_decode(0x38, fn) == 1.0);
  CHECK(e4m3_decode(0x01, fn) == std::ldexp(1.0, -9));  // smallest subnormal
  CHECK(e4m3_decode(0x07, fn) == 7 * std::ldexp(1.0, -9));
  CHECK(e4m3_decode(0x08, fn) == std::ldexp(1.0, -6));  // smallest normal
  CHECK(e4m3_decode(0x80, fn) == 0.0);
  CHECK(std::signbit(e4m3_decode(0x80, fn)));

  CHECK(e4m3_encode(448.0, fn) == 0x7E);
  CHECK(e4m3_encode(464.0, fn) == 0x7E);  // tie 448 | 480 -> 448 (even)
  CHECK(e4m3_encode(470.0, fn) == 0x7E);  // would round to 480 = NaN's code: saturate
  CHECK(e4m3_encode(1e6, fn) == 0x7E);
  CHECK(e4m3_encode(-1e6, fn) == 0xFE);
  CHECK(e4m3_encode(std::numeric_limits<double>::infinity(), fn) == 0x7E);
  CHECK(e4m3_encode(std::nan(""), fn) == 0x7F);
  CHECK(e4m3_encode(std::ldexp(1.0, -9), fn) == 0x01);
  CHECK(e4m3_encode(std::ldexp(1.0, -10), fn) == 0x00);       // tie 0 | 2^-9 -> 0
  CHECK(e4m3_encode(1.5 * std::ldexp(1.0, -10), fn) == 0x01);
  CHECK(e4m3_encode(-std::ldexp(1.0, -11), fn) == 0x80);      // -0 exists in fn
  CHECK(e4m3_encode(1.0 + 1.0 / 16, fn) == 0x38);             // tie 1 | 1.125 -> 1
  CHECK(e4m3_encode(1.0 + 3.0 / 16, fn) == 0x3A);             // tie 1.125 | 1.25 -> 1.25
  CHECK(e4m3_encode(7.5 * std::ldexp(1.0, -9), fn) == 0x08);  // subnormal rounds up to normal
  CHECK(e4m3_encode(15.5, fn) == 0x58);                       // tie 15 | 16 -> 16 (next binade)
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;
    CAPTURE(c);
    CHECK(e4m3_encode(e4m3_decode(static_cast<std::uint8_t>(c), fn), fn) == c);
  }
}

TEST_CASE("e4m3fnuz (gfx942): bias 8, max 240, single NaN 0x80, no -0", "[moe]") {
  auto const fnuz = Fp8Flavor::fnuz;
  CHECK(e4m3_max(fnuz) == 240.0);
  CHECK(e4m3_decode(0x7F, fnuz) == 240.0);
  CHECK(e4m3_decode(0xFF, fnuz) == -240.0);
  CHECK(std::isnan(e4m3_decode(0x80, fnuz)));
  CHECK(e4m3_decode(0x40, fnuz) == 1.0);
  CHECK(e4m3_decode(0x01, fnuz) == std::ldexp(1.0, -10));
  CHECK(e4m3_decode(0x08, fnuz) == std::ldexp(1.0, -7));

  CHECK(e4m3_encode(240.0, fnuz) == 0x7F);
  CHECK(e4m3_encode(250.0, fnuz) == 0x7F);
  CHECK(e4m3_encode(-1e6, fnuz) == 0xFF);
  CHECK(e4m3_encode(std::nan(""), fnuz) == 0x80);
  CHECK(e4m3_encode(-0.0, fnuz) == 0x00);
  CHECK(e4m3_encode(-std::ldexp(1.0, -12), fnuz) == 0x00);
  CHECK(e4m3_encode(std::ldexp(1.0, -11), fnuz) == 0x00);   // tie 0 | 2^-10 -> 0
  CHECK(e4m3_encode(1.0 + 3.0 / 16, fnuz) == 0x42);
  for (int c = 0; c < 256; ++c) {
    if (c == 0x80) continue;
    CAPTURE(c);
    CHECK(e4m3_encode(e4m3_decode(static_cast<std::uint8_t>(c), fnuz), fnuz) == c);
  }
}

TEST_CASE("block scale exponent is the exact ceil(log2(amax/emax)), clamped", "[moe]") {
  CHECK(mx_scale_exponent(12.0, MxElement::e2m1) == 1);
  CHECK(mx_scale_exponent(6.0, MxElement::e2m1) == 0);
  CHECK(mx_scale_exponent(std::nextafter(6.0, 7.0), MxElement::e2m1) == 1);
  CHECK(mx_scale_exponent(3.0, MxElement::e2m1) == -1);
  CHECK(mx_scale_exponent(6144.0, MxElement::e2m1) == 10);
  CHECK(mx_scale_exponent(std::nextafter(6144.0, 1e9), MxElement::e2m1) == 11);
  CHECK(mx_scale_exponent(448.0, MxElement::e4m3fn) == 0);
  CHECK(mx_scale_exponent(449.0, MxElement::e4m3fn) == 1);
  CHECK(mx_scale_exponent(240.0, MxElement::e4m3fnuz) == 0);
  CHECK(mx_scale_exponent(241.0, MxElement::e4m3fnuz) == 1);
  CHECK(mx_scale_exponent(1e-60, MxElement::e2m1) == -127);
  CHECK(mx_scale_exponent(1e300, MxElement::e2m1) == 127);
  // Exhaustive over a range of binades: 2^e is the smallest power of two that fits.
  for (int k = -20; k <= 20; ++k) {
    for (double f : {0.51, 0.75, 1.0, 1.3, 1.99}) {
      double const amax = std::ldexp(f, k);
      int const e = mx_scale_exponent(amax, MxElement::e2m1);
      CAPTURE(amax, e);
      CHECK(amax <= 6.0 * std::ldexp(1.0, e));
      CHECK(amax > 6.0 * std::ldexp(1.0, e - 1));
    }
  }
}

TEST_CASE("MXFP4 block quantiser on a hand-made block", "[moe]") {
  // amax 12 -> e = 1 (scale byte 128): 12/2 = 6, 3/2 = 1.5, -1.5/2 = -0.75 (tie -> -1),
  // 0.5/2 = 0.25 (tie -> 0), 9/2 = 4.5 (-> 4), 11/2 = 5.5 (-> 6).
  auto const block = block_of({12, 3, -1.5, 0.5, 9, 11});
  std::vector<std::uint8_t> codes(mx_block / 2), scales(1);
  quantize_mxfp4_row(block, codes, scales);
  CHECK(scales[0] == 128);
  CHECK((codes[0] & 0xF) == 7);  // element 0 in the low nibble
  CHECK((codes[0] >> 4) == 3);   // element 1 in the high nibble
  CHECK((codes[1] & 0xF) == 10);
  CHECK((codes[1] >> 4) == 0);
  CHECK((codes[2] & 0xF) == 6);
  CHECK((codes[2] >> 4) == 7);
  for (std::size_t i = 3; i < codes.size(); ++i) CHECK(codes[i] == 0);

  std::vector<double> back(mx_block);
  dequantize_mxfp4_row(codes, scales, back);
  CHECK(back[0] == 12.0);
  CHECK(back[1] == 3.0);
  CHECK(back[2] == -2.0);
  CHECK(back[3] == 0.0);
  CHECK(back[4] == 8.0);
  CHECK(back[5] == 12.0);
}

TEST_CASE("MXFP4 nibble order: element 2i low, 2i+1 high", "[moe]") {
  auto const block = block_of({1.0, 2.0});  // amax 2 -> e = -1: codes 4 (2.0) and 6 (4.0)
  std::vector<std::uint8_t> codes(mx_block / 2), scales(1);
  quantize_mxfp4_row(block, codes, scales);
  CHECK(scales[0] == 126);
  CHECK(codes[0] == 0x64);
}

TEST_CASE("all-zero block gets scale byte 127 and zero codes", "[moe]") {
  std::vector<double> zeros(2 * mx_block, 0.0);
  std::vector<std::uint8_t> codes(mx_block, 0xAA), scales(2, 0);
  quantize_mxfp4_row(zeros, codes, scales);
  CHECK(scales == std::vector<std::uint8_t>{127, 127});
  for (auto c : codes) CHECK(c == 0);
  std::vector<std::uint8_t> codes8(2 * mx_block, 0xAA);
  quantize_mxfp8_row(zeros, Fp8Flavor::fnuz, codes8, scales);
  CHECK(scales == std::vector<std::uint8_t>{127, 127});
  for (auto c : codes8) CHECK(c == 0);
}

TEST_CASE("MXFP8 block quantiser uses the flavour's emax", "[moe]") {
  auto const block = block_of({896.0, 1.0, -3.0});  // 896 = 2 * 448
  std::vector<std::uint8_t> codes(mx_block), scales(1);
  quantize_mxfp8_row(block, Fp8Flavor::ocp, codes, scales);
  CHECK(scales[0] == 128);
  CHECK(codes[0] == 0x7E);                       // 448
  CHECK(e4m3_decode(codes[1], Fp8Flavor::ocp) == 0.5);
  CHECK(e4m3_decode(codes[2], Fp8Flavor::ocp) == -1.5);
  quantize_mxfp8_row(block, Fp8Flavor::fnuz, codes, scales);
  CHECK(scales[0] == 129);                       // 896/240 -> 2^2
  CHECK(e4m3_decode(codes[0], Fp8Flavor::fnuz) == 224.0);
  std::vector<double> back(mx_block);
  dequantize_mxfp8_row(codes, scales, Fp8Flavor::fnuz, back);
  CHECK(back[0] == 896.0);
  CHECK(back[1] == 1.0);
  CHECK(back[2] == -3.0);
}

TEST_CASE("MX quantisation is within half a step and idempotent", "[moe]") {
  Rng rng(42);
  std::vector<double> values(4 * 64);
  for (auto& v : values) v = rng.approx_normal() * 0.05;
  for (auto element : {MxElement::e2m1, MxElement::e4m3fn, MxElement::e4m3fnuz}) {
    CAPTURE(static_cast<int>(element));
    auto const q = quantize_mx(values, 4, 64, element);
    auto const back = dequantize_mx(q);
    auto const again = dequantize_mx(quantize_mx(back, 4, 64, element));
    CHECK(again == back);
    for (std::size_t i = 0; i < values.size(); ++i) {
      double const scale = e8m0_decode(q.scales[i / mx_block]);
      // Largest gap between neighbours: 2 (e2m1, between 4 and 6) or 32 (e4m3 fn near 448).
      double const half_step = (element == MxElement::e2m1 ? 1.0 : 16.0) * scale;
      CHECK(std::fabs(back[i] - values[i]) <= half_step);
    }
  }
}

TEST_CASE("MX quantiser rejects non-finite input and malformed rows", "[moe]") {
  auto block = block_of({1.0});
  block[5] = std::numeric_limits<double>::infinity();
  std::vector<std::uint8_t> codes(mx_block / 2), scales(1);
  CHECK_THROWS_AS(quantize_mxfp4_row(block, codes, scales), Error);
  std::vector<double> short_row(31, 0.0);
  CHECK_THROWS_AS(quantize_mxfp4_row(short_row, codes, scales), Error);
}
