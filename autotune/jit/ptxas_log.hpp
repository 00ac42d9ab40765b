#pragma once
// Reads the resource figures out of ptxas's verbose report (NVRTC with --ptxas-options=-v):
//   ptxas info    : Function properties for _Z6kernelPf
//       8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
//   ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
#include <map>
#include <string>
#include <string_view>

#include "autotune/jit/compile_result.hpp"

namespace moetune::jit {

// Figures per mangled entry-function name. Functions ptxas did not report are absent.
[[nodiscard]] std::map<std::string, ResourceUsage> parse_ptxas_log(std::string_view log);

// ptxas's "wgmma.mma_async instructions are serialized" warnings (C7510-C7519), per mangled
// function: "C7512: insufficient register resources". Serialised, every wgmma is waited for
// before the next and nothing runs under it -- a kernel that compiles, passes and is slow
// (docs/kernels.md, the k16 decode).
//   ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are
//   serialized due to insufficient register resources for the function '_Z...'
[[nodiscard]] std::map<std::string, std::string> serialized_wgmma(std::string_view log);

}  // namespace moetune::jit
