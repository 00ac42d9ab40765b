#include "autotune/exec/delay_unit.hpp"

namespace moetune::exec {

jit::KernelSource delay_unit_source() {
  return jit::single_kernel_unit("moetune_delay", "calibrate: fixed busy-wait after stage two",
                                 "moe_delay.cuh", delay_kernel_name);
}

search::LaunchPlan delay_launch_plan() {
  search::LaunchPlan plan;
  plan.launches.push_back({delay_kernel_name, search::Dim3{1, 1, 1}, search::Dim3{1, 1, 1}, 0});
  return plan;
}

}  // namespace moetune::exec
