#include "apps/moe-tune/code_provenance.hpp"

#include "apps/moe-tune/commands.hpp"
#include "autotune/core/sha256.hpp"
#include "autotune/jit/embedded_kernels.hpp"

namespace moetune::app {

tune::Provenance code_provenance(const exec::UnitCompiler& compiler) {
  tune::Provenance p;
  p.runtime_compiler = compiler.compiler().identity();
  p.git_revision = MOETUNE_GIT_REVISION;
  p.decision_code_sha256 = MOETUNE_DECISION_CODE_SHA256;
  p.command = command_line();
  for (auto const& f : jit::embedded_kernel_files()) {
    p.kernel_source_sha256[f.name] = sha256_hex(f.text);
  }
  return p;
}

}  // namespace moetune::app
