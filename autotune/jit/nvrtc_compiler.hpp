#pragma once
// NVRTC (CUDA 13) for sm_90 / sm_90a: compiles straight to a cubin with no GPU present, maps
// name expressions through nvrtcAddNameExpression / nvrtcGetLoweredName, and reads registers,
// shared memory and spills from ptxas's verbose log.
#include <memory>

#include "autotune/jit/compiler.hpp"

namespace moetune::jit {

[[nodiscard]] std::unique_ptr<Compiler> make_nvrtc_compiler(const CompilerConfig& config);

}  // namespace moetune::jit
