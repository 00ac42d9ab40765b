#pragma once
// A known slowdown for `moe-tune calibrate`: one single-thread kernel that busy-waits a fixed
// wall-clock time. Appended after stage two, it slows a pipeline by a known amount on the GPU
// itself (launch gap, clocks and all), which a multiplied number in software cannot do. It
// reads no memory, so placement, the very confound calibrate measures, cannot touch it.
#include "moetune_portability.h"

namespace moetune {

// Nanoseconds of a clock that runs at a fixed rate whatever the SM/CU clock does.
MOETUNE_DEV u64 wall_clock_ns() {
#if defined(MOETUNE_CUDA) && defined(MOETUNE_DEVICE_PASS)
  u64 t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
#elif defined(MOETUNE_AMD) && defined(MOETUNE_DEVICE_PASS)
  // s_memrealtime counts a constant 100 MHz on gfx9 (CDNA): 10 ns per tick.
  return __builtin_amdgcn_s_memrealtime() * 10ull;
#else
  return 0;  // host pass: never called
#endif
}

// Launched as one block of one thread. ns == 0 still costs one kernel launch, which is how
// the unslowed arm of a calibration trial carries the same extra launch as the slowed one.
__global__ void MOETUNE_LAUNCH_BOUNDS(1, 0) moe_delay(u64 ns) {
  u64 const start = wall_clock_ns();
  while (wall_clock_ns() - start < ns) {
  }
}

}  // namespace moetune
