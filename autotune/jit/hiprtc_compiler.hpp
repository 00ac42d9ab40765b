#pragma once
// hipRTC for gfx90a (Debian's HIP 5.2 ships hipRTC inside libamdhip64.so.5; ROCm also ships a
// separate libhiprtc.so). Compiles without a GPU; name expressions through
// hiprtcAddNameExpression / hiprtcGetLoweredName; resources from the code object's metadata.
#include <memory>

#include "autotune/jit/compiler.hpp"

namespace moetune::jit {

[[nodiscard]] std::unique_ptr<Compiler> make_hiprtc_compiler(const CompilerConfig& config);

}  // namespace moetune::jit
