#include "autotune/exec/delay_unit.hpp"

namespace moetune::exec {

jit::KernelSource delay_unit_source() {
  jit::KernelSource out;
  out.unit_name = "moetune_delay";
  // The kernel is not a template: naming it is enough to keep and resolve it.
  out.source = "// moe-tune calibrate: fixed busy-wait after stage two\n#include \"moe_delay.cuh\"\n";
  out.kernel_names = {delay_kernel_name};
  return out;
}

search::LaunchPlan delay_launch_plan() {
  search::LaunchPlan plan;
  plan.launches.push_back({delay_kernel_name, search::Dim3{1, 1, 1}, search::Dim3{1, 1, 1}, 0});
  return plan;
}

}  // namespace moetune::exec
