#pragma once
// Element formats of docs/kernel-contract.md and the per-1x32 block quantiser (MX formats).
//
// These functions define, on the host, exactly what the bytes handed to a kernel mean. They
// are the single source of truth for packing weights and activations and for decoding them in
// the CPU reference, so every rule here follows the contract word for word:
//   bf16      round-to-nearest-even, NaN kept (quieted)
//   e2m1      {0,.5,1,1.5,2,3,4,6}, codes 8-15 negative; nearest, ties to even, saturating ±6
//   e8m0      2^(b-127); 255 is NaN and never written
//   e4m3 fn   (OCP) bias 7, max 448, NaN 0x7F/0xFF, no infinities
//   e4m3fnuz  (gfx942) bias 8, max 240, NaN 0x80, no negative zero
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace moetune::moe {

// ---- bf16 -------------------------------------------------------------------------------

[[nodiscard]] float bf16_to_float(std::uint16_t bits);
// Round-to-nearest-even; overflow goes to ±inf as in IEEE; NaN stays NaN (sign kept, quieted).
[[nodiscard]] std::uint16_t float_to_bf16(float value);
// Same rounding from double in a single step: rounding double->float->bf16 could round twice
// and differ in the last place. The reference's intermediate uses this.
[[nodiscard]] std::uint16_t double_to_bf16(double value);
[[nodiscard]] inline double round_to_bf16(double value) {
  return static_cast<double>(bf16_to_float(double_to_bf16(value)));
}

// ---- e2m1 (MXFP4 element) -----------------------------------------------------------------

[[nodiscard]] float e2m1_decode(std::uint8_t code);  // low 4 bits used
// Nearest representable, ties to the even code, saturating at ±6. The sign of negative values
// that round to zero is kept (code 8, -0). NaN is not representable: encodes as 0.
[[nodiscard]] std::uint8_t e2m1_encode(double value);

// ---- e8m0 (MX scale) ------------------------------------------------------------------------

inline constexpr std::uint8_t e8m0_nan = 255;
[[nodiscard]] double e8m0_decode(std::uint8_t bits);  // 2^(bits-127); NaN for 255
// Byte for 2^exponent, exponent clamped to [-127, 127] (254 is never produced: the contract's
// rule clamps at 127).
[[nodiscard]] std::uint8_t e8m0_encode(int exponent);

// ---- e4m3 (MXFP8 element) -----------------------------------------------------------------

// Which e4m3: OCP's "fn" (NVIDIA, gfx950) or "fnuz" (gfx942).
enum class Fp8Flavor { ocp, fnuz };
[[nodiscard]] std::string_view to_string(Fp8Flavor flavor);

[[nodiscard]] double e4m3_max(Fp8Flavor flavor);  // 448 or 240
[[nodiscard]] double e4m3_decode(std::uint8_t bits, Fp8Flavor flavor);
// Round to nearest even, saturating at ±max; ±inf saturate too; NaN encodes as NaN.
// fnuz has no -0: negative values that round to zero give 0x00 (0x80 is its NaN).
[[nodiscard]] std::uint8_t e4m3_encode(double value, Fp8Flavor flavor);

// ---- per-1x32 block quantisation ------------------------------------------------------------

inline constexpr int mx_block = 32;

enum class MxElement { e2m1, e4m3fn, e4m3fnuz };
[[nodiscard]] MxElement fp8_element(Fp8Flavor flavor);
[[nodiscard]] double mx_element_max(MxElement element);  // emax: 6, 448, 240

// The contract's scale exponent for a block with largest magnitude `amax` > 0: the smallest e
// with amax / 2^e <= emax, clamped to [-127, 127]. Exact (no log2 rounding): an estimate from
// frexp is corrected by exact comparisons against emax * 2^e.
[[nodiscard]] int mx_scale_exponent(double amax, MxElement element);
// Scale byte for one block of up to 32 values (127 when the block is all zeros). Throws
// moetune::Error on NaN/Inf input: there is no meaningful scale for it.
[[nodiscard]] std::uint8_t mx_scale_byte(std::span<const double> block, MxElement element);

// One row whose length is a multiple of 32. MXFP4: codes.size() == row.size()/2 (element 2i
// in the low nibble of byte i), scales.size() == row.size()/32.
void quantize_mxfp4_row(std::span<const double> row, std::span<std::uint8_t> codes,
                        std::span<std::uint8_t> scales);
void quantize_mxfp8_row(std::span<const double> row, Fp8Flavor flavor,
                        std::span<std::uint8_t> codes, std::span<std::uint8_t> scales);
void dequantize_mxfp4_row(std::span<const std::uint8_t> codes,
                          std::span<const std::uint8_t> scales, std::span<double> out);
void dequantize_mxfp8_row(std::span<const std::uint8_t> codes,
                          std::span<const std::uint8_t> scales, Fp8Flavor flavor,
                          std::span<double> out);

// A row-major matrix quantised per 1x32 along its rows (the K dimension).
struct MxMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  MxElement element = MxElement::e2m1;
  std::vector<std::uint8_t> codes;   // [rows][cols/2] for e2m1, [rows][cols] for e4m3
  std::vector<std::uint8_t> scales;  // [rows][cols/32]
};
[[nodiscard]] MxMatrix quantize_mx(std::span<const double> values, std::int64_t rows,
                                   std::int64_t cols, MxElement element);
[[nodiscard]] std::vector<double> dequantize_mx(const MxMatrix& matrix);

}  // namespace moetune::moe
