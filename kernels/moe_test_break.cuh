#pragma once
// TEST ONLY: deliberate bugs that show each correctness gate of the verifier can fail
// (test/exec/verifier_break_gpu_test.cpp). A unit carries one only when a test asks for it:
// search::render_with_test_break adds -DMOETUNE_TEST_BREAK=N (and the threshold below).
// Without the define test_break is test_break_none, and every `if constexpr (test_break ==
// ...)` in the kernels is discarded at compile time: production units are the same code.
// The numbers mirror search::TestBreak (autotune/search/test_break.hpp).
#include "moetune_portability.h"

#ifndef MOETUNE_TEST_BREAK
#define MOETUNE_TEST_BREAK 0
#endif
#ifndef MOETUNE_TEST_BREAK_ABOVE_M
#define MOETUNE_TEST_BREAK_ABOVE_M 64
#endif

namespace moetune {

enum TestBreak : int {
  test_break_none = 0,
  test_break_wrong_output_element = 1,  // moe_reduce_y: y[0][0] off by 1 + |y|
  test_break_skip_routing_weight = 2,   // moe_stage1/2: every routing weight is taken as 1
  test_break_unwritten_output_row = 3,  // moe_reduce_y: the last token's row is never written
  test_break_corrupt_input = 4,         // moe_sort: topk_ids[0] changed after it was read
  test_break_wrong_output_above_m = 5,  // as wrong_output_element, only when M > the threshold
};

constexpr int test_break = MOETUNE_TEST_BREAK;
constexpr int test_break_above_m = MOETUNE_TEST_BREAK_ABOVE_M;

}  // namespace moetune
