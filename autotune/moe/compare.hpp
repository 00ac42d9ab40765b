#pragma once
// Verdict on a GPU output against the CPU reference (DESIGN.md §2): per element
// |y - ref| <= atol + rtol*|ref| on every column of the sampled tokens; any NaN or Inf in what
// is checked fails; max-abs, max-rel and relative-L2 figures for the report.
#include <cstdint>
#include <span>
#include <string>

#include "autotune/moe/reference.hpp"

namespace moetune::moe {

struct Tolerance {
  double atol = 0.02;
  double rtol = 0.02;
};

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

  [[nodiscard]] bool passed() const { return failures == 0 && non_finite == 0 && checked > 0; }
  // "PASS 337920 checked, max_abs 3.1e-03, max_rel 1.2e-02, rel_l2 2.0e-03 (atol 0.02, rtol 0.02)"
  // or "FAIL 12/337920 outside tolerance, 1 NaN/Inf; first at token 5 col 17: 0.53 vs ref 0.41; ..."
  [[nodiscard]] std::string summary() const;
};

// Accumulates element pairs; the building block of the comparisons below, usable for any
// other rows (e.g. a stage-one output against ReferenceRows::h).
class Comparator {
 public:
  explicit Comparator(Tolerance tolerance = {}) { m_result.tolerance = tolerance; }
  void add(double value, double reference, std::int64_t row, std::int64_t col);
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

// Largest |a - b| between two GPU outputs of the same shape ("how far tuning moved
// numerics"); +inf if either holds a NaN/Inf anywhere or the sizes differ.
[[nodiscard]] double max_abs_difference(std::span<const std::uint16_t> a,
                                        std::span<const std::uint16_t> b);

}  // namespace moetune::moe
