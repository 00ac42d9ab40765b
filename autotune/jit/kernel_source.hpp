#pragma once
// The contract between the kernels (rendered by autotune/search) and the compilers
// (autotune/jit): one candidate is one tiny translation unit that instantiates one
// specialization of a kernel template from kernels/.
#include <string>
#include <utility>
#include <vector>

namespace moetune::jit {

struct KernelSource {
  // Unique, human-readable label of the unit, e.g. the variant name
  // "moetune_s1_a16w4_bf16_t32x128x256_w4_kp2_nk16_wv2_st2". Used in logs and cache entries.
  std::string unit_name;
  // The generated translation unit. It #includes kernel headers by bare name
  // (#include "moetune_portability.h"); those resolve to embedded_kernel_files() only — no
  // host or vendor header is ever visible to a kernel.
  std::string source;
  // C++ expressions naming each __global__ function the host will launch, e.g.
  // "moetune::moe_stage1<moetune::Stage1Config<32,128,256,4,2,16,2,2>>". The compiler maps
  // each to its lowered (mangled) name through the runtime compiler's name-expression API.
  std::vector<std::string> kernel_names;
  // Extra preprocessor definitions, "NAME=VALUE" or "NAME".
  std::vector<std::string> defines;
  // The index in kernel_names of the kernel the unit is named for (a variant's tile; its sort
  // or reduce kernels ride along): tables show its registers and LDS. Not part of the cache key.
  // Last, so the units written as {name, source, kernels, defines} keep meaning what they say.
  std::size_t primary_kernel = 0;
};

// A unit of one non-template kernel from one kernels/ header (the verifier's checksum,
// calibrate's delay): naming the kernel is enough to keep and resolve it. `purpose` becomes
// the unit's first comment line ("// moe-tune <purpose>").
inline KernelSource single_kernel_unit(std::string unit_name, const std::string& purpose,
                                       const std::string& header, std::string kernel_name) {
  KernelSource out;
  out.unit_name = std::move(unit_name);
  out.source = "// moe-tune " + purpose + "\n#include \"" + header + "\"\n";
  out.kernel_names = {std::move(kernel_name)};
  return out;
}

}  // namespace moetune::jit
