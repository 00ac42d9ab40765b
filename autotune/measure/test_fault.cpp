#include "autotune/measure/test_fault.hpp"

#include <cstdint>
#include <cstdio>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/jit/compile_pool.hpp"

namespace moetune::measure {

namespace {

constexpr const char* kStoreKernel = "moetune::moe_test_fault_store";
constexpr const char* kSpinKernel = "moetune::moe_test_fault_spin";

}  // namespace

jit::KernelSource test_fault_unit_source() {
  jit::KernelSource out;
  out.unit_name = "moetune_test_fault";
  out.source = "// moe-tune --test-fault: kernels that fault or hang on purpose\n"
               "#include \"moe_test_fault.cuh\"\n";
  out.kernel_names = {kStoreKernel, kSpinKernel};
  return out;
}

std::vector<TestFault> parse_test_faults(std::string_view spec) {
  std::vector<TestFault> out;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    auto const comma = spec.find(',', pos);
    auto const item = spec.substr(pos, comma == std::string_view::npos ? spec.npos : comma - pos);
    pos = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    auto const bad = [&] {
      return Error(fmt::format("--test-fault: '{}' is not SUBSTRING=trap|spin[@build]", item));
    };
    auto const eq = item.rfind('=');
    if (eq == std::string_view::npos || eq == 0) throw bad();
    TestFault f;
    f.pair_substring = std::string(item.substr(0, eq));
    auto what = item.substr(eq + 1);
    if (what.ends_with("@build")) {
      f.when = TestFault::When::build;
      what.remove_suffix(6);
    }
    if (what == "trap") {
      f.kind = TestFault::Kind::trap;
    } else if (what == "spin") {
      f.kind = TestFault::Kind::spin;
    } else {
      throw bad();
    }
    out.push_back(std::move(f));
  }
  return out;
}

TestFaultInjector::TestFaultInjector(const gpu::Device& device, const jit::Compiler& compiler,
                                     std::vector<TestFault> faults)
    : m_device(device), m_compiler(compiler), m_faults(std::move(faults)) {}

void TestFaultInjector::load() {
  if (m_module) return;
  auto const outcome = jit::compile_unit(m_compiler, nullptr, test_fault_unit_source());
  if (outcome.status != jit::CompileStatus::ok || outcome.result.kernels.size() != 2) {
    throw Error(fmt::format("--test-fault: kernels/moe_test_fault.cuh did not compile: {}",
                            outcome.result.log));
  }
  m_module.emplace(m_device, outcome.result.image);
  m_store.emplace(m_module->function(outcome.result.kernels[0].lowered_name));
  m_spin.emplace(m_module->function(outcome.result.kernels[1].lowered_name));
  m_flag.emplace(m_device, 256);
  m_flag->memset(0);
}

bool TestFaultInjector::inject(const std::string& pair_name, TestFault::When when,
                               const gpu::Stream& stream) {
  for (auto const& f : m_faults) {
    if (f.when != when || pair_name.find(f.pair_substring) == std::string::npos) continue;
    load();
    std::fprintf(stderr, "test fault: %s %s (matched '%s')\n",
                 f.kind == TestFault::Kind::trap ? "illegal store for" : "endless spin for",
                 pair_name.c_str(), f.pair_substring.c_str());
    if (f.kind == TestFault::Kind::trap) {
      // An address no allocation covers; not null, so it is a plain illegal access.
      void* bad = reinterpret_cast<void*>(std::uintptr_t{0x10});
      void* args[] = {&bad};
      m_store->launch({1, 1, 1}, {1, 1, 1}, 0, stream, args);
    } else {
      void* flag = m_flag->data();
      void* args[] = {&flag};
      m_spin->launch({1, 1, 1}, {1, 1, 1}, 0, stream, args);
    }
    return true;
  }
  return false;
}

}  // namespace moetune::measure
