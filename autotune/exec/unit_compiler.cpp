#include "autotune/exec/unit_compiler.hpp"

#include "autotune/search/render.hpp"
#include "autotune/search/test_break.hpp"

namespace moetune::exec {

UnitCompiler::UnitCompiler(search::Arch arch, std::filesystem::path cache_dir, bool use_cache,
                           search::TestBreakSpec test_break, std::vector<std::string> extra_options)
    : m_arch(arch),
      m_test_break(test_break),
      m_compiler(jit::make_compiler(
          jit::CompilerConfig{std::string(search::to_string(arch)), {}, std::move(extra_options)})) {
  if (use_cache) {
    m_cache = std::make_unique<jit::CodeCache>(cache_dir.empty() ? jit::default_cache_dir()
                                                                 : std::move(cache_dir));
  }
}

const jit::CompileOutcome& UnitCompiler::compile(const search::KernelConfig& config) {
  auto const name = config.name();
  {
    std::lock_guard lock(m_mutex);
    if (auto it = m_done.find(name); it != m_done.end()) return it->second;
  }
  auto const unit = m_test_break.kind == search::TestBreak::none
                        ? search::render(config, m_arch)
                        : search::render_with_test_break(config, m_arch, m_test_break);
  auto outcome = jit::compile_unit(*m_compiler, m_cache.get(), unit);
  std::lock_guard lock(m_mutex);
  return m_done.emplace(name, std::move(outcome)).first->second;
}

}  // namespace moetune::exec
