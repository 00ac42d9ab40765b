#pragma once
// The translation unit of kernels/moe_delay.cuh (calibrate's known slowdown), for the JIT:
// it is compiled apart from the candidates' units so that no tuned unit, and no cache key of
// one, changes because calibration exists.
#include "autotune/jit/kernel_source.hpp"
#include "autotune/search/render.hpp"

namespace moetune::exec {

inline constexpr const char* delay_kernel_name = "moetune::moe_delay";

[[nodiscard]] jit::KernelSource delay_unit_source();

// One block of one thread: the kernel only waits.
[[nodiscard]] search::LaunchPlan delay_launch_plan();

}  // namespace moetune::exec
