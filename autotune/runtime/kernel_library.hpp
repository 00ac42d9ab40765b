#pragma once
// The context's compiled and loaded kernels: each configuration is compiled (or read from the
// code cache) and its code object loaded once per context, however many layers and buckets
// use it (a DeepSeek model has dozens of MoE layers of one shape). Modules live as long as the
// context, so every layer prepared from it must be destroyed first.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "autotune/exec/unit_compiler.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/search/render.hpp"

namespace moetune::runtime {

class KernelLibrary {
 public:
  KernelLibrary(const gpu::Device& device, search::Arch arch, std::filesystem::path cache_dir);

  // Compiles the configuration (or finds it in the code cache) and loads it: nullopt on
  // success, else why it cannot run (compile error, a module the driver refuses).
  [[nodiscard]] std::optional<std::string> prepare(const search::KernelConfig& config);
  // The kernel of a prepared configuration that `launch` names, opted in to the launch's
  // dynamic shared memory. Throws moetune::Error if the configuration was not prepared.
  [[nodiscard]] gpu::Kernel kernel(const search::KernelConfig& config,
                                   const search::KernelLaunch& launch) const;
  // How the configuration's unit was obtained: "compiled", "cache" (on disk) or "" (not yet).
  [[nodiscard]] std::string provenance(const search::KernelConfig& config) const;
  [[nodiscard]] search::Arch arch() const { return m_arch; }

 private:
  struct LoadedUnit {
    const jit::CompileOutcome* outcome = nullptr;  // owned by m_compiler
    std::optional<gpu::Module> module;
  };
  const gpu::Device* m_device;
  search::Arch m_arch;
  exec::UnitCompiler m_compiler;
  std::map<std::string, LoadedUnit> m_units;  // by configuration name
};

}  // namespace moetune::runtime
