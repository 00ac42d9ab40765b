#pragma once
// TEST ONLY: two kernels that misbehave on purpose, so that the worker-process isolation and
// the watchdog of `moe-tune tune` (docs/tuning.md, "Isolation and the watchdog") can be shown
// on a real GPU. No search space or pipeline ever includes this file; autotune/tune/
// test_fault.cpp compiles it on request (`--test-fault`) and launches one of them before an
// arm's work.
#include "moetune_portability.h"

namespace moetune {

// A store through `bad`, which the host sets to an address no allocation covers (0x10): the
// device reports an illegal address and the context is lost, exactly as a candidate indexing
// out of bounds would leave it. The pointer is a parameter, not a constant, so no compiler
// can see through it and fold the store into anything else.
__global__ void MOETUNE_LAUNCH_BOUNDS(1, 0) moe_test_fault_store(u32* bad) {
  *static_cast<volatile u32*>(bad) = 1u;
}

// Spins until `flag` (a zeroed device word the host never writes) becomes non-zero: a hang.
// The volatile read keeps the loop a real memory access on every iteration, so the compiler
// may neither hoist it nor treat the loop as UB-free-to-delete.
__global__ void MOETUNE_LAUNCH_BOUNDS(1, 0) moe_test_fault_spin(const u32* flag) {
  while (*static_cast<const volatile u32*>(flag) == 0u) {
  }
}

}  // namespace moetune
