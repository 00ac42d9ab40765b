#pragma once
// Verdict on a GPU output against the CPU reference (DESIGN.md §2): per element
// |y - ref| <= atol + rtol*|ref| on every column of the sampled tokens; any NaN or Inf in what
// is checked fails; max-abs, max-rel and relative-L2 figures for the report. Stage one's output
// h is compared the same way on the sampled tokens' slots (bf16 as is; MXFP8 dequantised, with
// an allowance for the e4m3 rounding both sides make).
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "autotune/moe/mx_formats.hpp"
#include "autotune/moe/reference.hpp"

namespace moetune::moe {

struct Tolerance {
  double atol = 0.02;
  double rtol = 0.02;
};

// The tolerance of AITER's `checkAllclose` (torch.isclose with rtol = atol = 1e-2, the
// reference as the second argument: |a - b| <= atol + rtol * |b|), whose mismatch share is
// what AITER records in a tuned row's err1/err2 columns.
inline constexpr Tolerance aiter_err_tolerance{0.01, 0.01};

struct CompareResult {
  Tolerance tolerance;
  std::int64_t checked = 0;     // elements compared
  std::int64_t failures = 0;    // outside the tolerance (non-finite ones included)
  std::int64_t non_finite = 0;  // NaN or Inf in the GPU values
  double max_abs = 0;           // max |y - ref| over finite elements
  double max_rel = 0;           // max |y - ref| / |ref| over elements with |ref| >= atol
  double rel_l2 = 0;            // ||y - ref||_2 / ||ref||_2 over finite elements
  // Where the first failure is: row of the comparison (token for outputs, slot for h) and column.
  std::int64_t first_fail_row = -1;
  std::int64_t first_fail_col = -1;
  double first_fail_value = 0;
  double first_fail_ref = 0;
  // What the bound allows beyond atol + rtol*|ref|, in words, when a comparison adds a
  // per-element allowance (the MXFP8 intermediate); empty otherwise. Printed in the summary.
  std::string allowance;

  [[nodiscard]] bool passed() const { return failures == 0 && non_finite == 0 && checked > 0; }
  // Share of compared elements outside the bound (non-finite ones included): AITER's err.
  // 1 when nothing was compared (nothing shown to be right).
  [[nodiscard]] double mismatch_share() const {
    return checked > 0 ? static_cast<double>(failures) / static_cast<double>(checked) : 1.0;
  }
  // "PASS 337920 checked, max_abs 3.1e-03, max_rel 1.2e-02, rel_l2 2.0e-03 (atol 0.02, rtol 0.02)"
  // or "FAIL 12/337920 outside tolerance, 1 NaN/Inf; first at token 5 col 17: 0.53 vs ref 0.41; ..."
  [[nodiscard]] std::string summary() const;
};

// Accumulates element pairs; the building block of the comparisons below, usable for any
// other rows (e.g. a stage-one output against ReferenceRows::h).
class Comparator {
 public:
  explicit Comparator(Tolerance tolerance = {}, std::string allowance = {}) {
    m_result.tolerance = tolerance;
    m_result.allowance = std::move(allowance);
  }
  // Passes when |value - reference| <= atol + rtol*|reference| + allowance.
  void add(double value, double reference, std::int64_t row, std::int64_t col,
           double allowance = 0.0);
  [[nodiscard]] CompareResult result() const;

 private:
  CompareResult m_result;
  double m_diff_sq = 0;
  double m_ref_sq = 0;
};

// The GPU output y (bf16, the whole [M][H] buffer) on the reference's tokens.
[[nodiscard]] CompareResult compare_output(std::span<const std::uint16_t> gpu_y,
                                           const ReferenceRows& reference,
                                           Tolerance tolerance = {});

// Stage one's bf16 h ([M*topk][I], A16W4 and bf16 paths) on the reference's slots. Rows in the
// result are GPU slot ids.
[[nodiscard]] CompareResult compare_intermediate_bf16(std::span<const std::uint16_t> gpu_h,
                                                      const ReferenceRows& reference,
                                                      Tolerance tolerance = {});

// Stage one's MXFP8 h (A8W4): e4m3 codes [M*topk][I] of `flavor` and E8M0 scales
// [M*topk][I/32], dequantised (code value x 2^(scale-127)) and compared on the reference's
// slots with the reference's h, which went through the same per-1x32 quantiser. Bound per
// element: |h - ref| <= atol + rtol*|ref| + e4m3_rounding_allowance(ref, block amax, flavor):
// the atol/rtol part covers the arithmetic before the rounding point (fp32 on the GPU, double
// in the reference), exactly as for a bf16 h; the allowance covers that the two sides then
// round nearly equal values to a 3-bit-mantissa format on their own. Rows are GPU slot ids.
[[nodiscard]] CompareResult compare_intermediate_mxfp8(std::span<const std::uint8_t> gpu_codes,
                                                       std::span<const std::uint8_t> gpu_scales,
                                                       Fp8Flavor flavor,
                                                       const ReferenceRows& reference,
                                                       Tolerance tolerance = {});

// The same comparison for an A8W4 pipeline that keeps h in bf16 (`_hb`): bf16 [M*topk][I]
// holding the MXFP8-quantised values themselves (code value x 2^(scale-127), exact in bf16).
[[nodiscard]] CompareResult compare_intermediate_mxfp8_bf16(std::span<const std::uint16_t> gpu_h, Fp8Flavor flavor,
                                                            const ReferenceRows& reference,
                                                            Tolerance tolerance = {});

// A bf16 h ([rows][inter], inter a multiple of 32) that claims to hold MXFP8-quantised values:
// the number of 32-column blocks that are not e4m3 values of `flavor` times one power of two
// (or hold NaN/Inf). An unquantised h stays within the comparison's rounding allowance, so
// this is what shows that the kernel quantised at all. Throws moetune::Error on a size that is
// not whole rows.
[[nodiscard]] std::int64_t count_blocks_off_mxfp8_grid(std::span<const std::uint16_t> h, std::int64_t inter,
                                                       Fp8Flavor flavor);

// How far an honest kernel's dequantised e4m3 element may sit from the reference's, beyond
// the arithmetic difference: two e4m3 spacings at |reference|. Two roundings of nearly equal
// values land at most on adjacent codes (one spacing), and the spacing doubles above a binade
// boundary (2^k), so two spacings cover both. e4m3 has 3 mantissa bits, so a normal value v
// has spacing 2^(floor(log2|v|)-3), at most |v|/8: the allowance is at most |ref|/4. Below the
// normal range the spacing is the subnormal one times the block's scale; the scale is the
// smallest power of two putting the block amax under e4m3's max, so it is below 2*amax/max,
// and the GPU's (from its own, slightly different amax) may be one power of two larger: the
// floor uses 4*amax/max. Subnormal spacing: 2^-9 (OCP e4m3fn), 2^-10 (e4m3fnuz).
[[nodiscard]] double e4m3_rounding_allowance(double reference, double block_amax,
                                             Fp8Flavor flavor);

// Largest |a - b| between two GPU outputs of the same shape ("how far tuning moved
// numerics"); +inf if either holds a NaN/Inf anywhere or the sizes differ.
[[nodiscard]] double max_abs_difference(std::span<const std::uint16_t> a,
                                        std::span<const std::uint16_t> b);

}  // namespace moetune::moe
