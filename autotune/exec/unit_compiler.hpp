#pragma once
// Compiles kernel configurations for the GPU in hand through the code cache, each distinct
// unit once per process (a tuning run asks for the baseline many times).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "autotune/jit/code_cache.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/jit/compiler.hpp"
#include "autotune/search/kernel_config.hpp"
#include "autotune/search/test_break.hpp"

namespace moetune::exec {

class UnitCompiler {
 public:
  // cache_dir empty = the default cache directory; use_cache false = compile every time.
  // test_break: TEST ONLY (search/test_break.hpp), every unit gets that deliberate bug.
  // extra_options: appended to every compile (jit::CompilerConfig; e.g. jit::line_info_options).
  UnitCompiler(search::Arch arch, std::filesystem::path cache_dir = {}, bool use_cache = true,
               search::TestBreakSpec test_break = {}, std::vector<std::string> extra_options = {});

  // The compiled unit of this configuration; a compile error is returned as an outcome
  // (status compile_error, with the log), never thrown.
  [[nodiscard]] const jit::CompileOutcome& compile(const search::KernelConfig& config);
  [[nodiscard]] search::Arch arch() const { return m_arch; }
  [[nodiscard]] const jit::Compiler& compiler() const { return *m_compiler; }

 private:
  search::Arch m_arch;
  search::TestBreakSpec m_test_break;
  std::unique_ptr<jit::Compiler> m_compiler;
  std::unique_ptr<jit::CodeCache> m_cache;
  std::mutex m_mutex;
  std::map<std::string, jit::CompileOutcome> m_done;
};

}  // namespace moetune::exec
