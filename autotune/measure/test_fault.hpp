#pragma once
// TEST ONLY: makes chosen candidates fault or hang on a real GPU, so the worker isolation and
// the watchdog (remote_sampler.hpp) can be shown on the hardware they exist for. `moe-tune
// tune --test-fault SPEC` (or MOETUNE_TEST_FAULT) names pipelines by a substring of their
// pair name:
//   SPEC   = ITEM[,ITEM...]
//   ITEM   = SUBSTRING=trap|spin[@build]
// trap: a store through an illegal address (a lost context, as an out-of-bounds candidate
// would leave it); spin: a kernel that never finishes. By default the kernel runs on the
// arm's stream right before each of its samples; with @build, while its block is built.
// The kernels are kernels/moe_test_fault.cuh, compiled by the run's own runtime compiler.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/gpu/gpu.hpp"
#include "autotune/jit/compiler.hpp"
#include "autotune/jit/kernel_source.hpp"

namespace moetune::measure {

struct TestFault {
  enum class Kind { trap, spin };
  enum class When { sample, build };
  std::string pair_substring;
  Kind kind = Kind::trap;
  When when = When::sample;
};

// The translation unit of kernels/moe_test_fault.cuh: the store kernel, then the spin kernel.
[[nodiscard]] jit::KernelSource test_fault_unit_source();

// Throws Error naming the item and the expected form.
[[nodiscard]] std::vector<TestFault> parse_test_faults(std::string_view spec);

class TestFaultInjector {
 public:
  TestFaultInjector(const gpu::Device& device, const jit::Compiler& compiler,
                    std::vector<TestFault> faults);

  // Launches the fault kernel of the first fault naming `pair_name` for `when` on `stream`,
  // and says so on stderr. Returns whether it launched one. Compiles on first use.
  bool inject(const std::string& pair_name, TestFault::When when, const gpu::Stream& stream);

 private:
  void load();

  const gpu::Device& m_device;
  const jit::Compiler& m_compiler;
  std::vector<TestFault> m_faults;
  std::optional<gpu::Module> m_module;
  std::optional<gpu::Kernel> m_store;
  std::optional<gpu::Kernel> m_spin;
  std::optional<gpu::DeviceBuffer> m_flag;  // zeroed, never written: what spin waits on
};

}  // namespace moetune::measure
