#pragma once
// Numbers written the way AITER's Python tuner writes them, so that rows moe-tune appends are
// indistinguishable from AITER's own and diffs of a tuned table stay readable.
//
// AITER stores round(x, 4) for times and round(x, 2) for tflops/bw in a pandas frame and lets
// to_csv print them, i.e. Python's repr(): the shortest text that reads back as the same
// double, always with a '.' or exponent ("0.0", "20.9291", "1e-05"). Mismatch rates are
// formatted with "{:.1%}" ("0.3%").
#include <string>

namespace moetune::io {

// Python's round(x, digits): round-half-even on the exact binary value.
[[nodiscard]] double python_round(double value, int digits);
// Python's repr(float).
[[nodiscard]] std::string python_float_repr(double value);

// repr(round(us, 4)): us1, us2 and us columns.
[[nodiscard]] std::string format_us(double microseconds);
// AITER's total: round(us1 + us2, 4).
[[nodiscard]] double total_us(double us1, double us2);
// "{:.1%}" of a fraction: 0.003 -> "0.3%".
[[nodiscard]] std::string format_percent(double fraction);
// repr(round(x, 2)): tflops and bw columns.
[[nodiscard]] std::string format_2dp(double value);

}  // namespace moetune::io
