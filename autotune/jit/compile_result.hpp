#pragma once
// What a runtime compiler produces for one KernelSource: the code object, the lowered name of
// every requested kernel, and the resources each kernel uses (figures a search space uses to
// prune and a report shows next to the timings).
#include <cstddef>
#include <string>
#include <vector>

namespace moetune::jit {

// -1 means "not reported by this compiler".
struct ResourceUsage {
  int registers = -1;      // per thread; VGPRs (incl. AGPRs) on AMD
  int sgprs = -1;          // AMD scalar registers per wave; -1 on NVIDIA
  int shared_bytes = -1;   // static shared memory / LDS (group segment) per block
  int spill_bytes = -1;    // NVIDIA: bytes of spill stores; AMD: 4 x VGPR spill count
  int scratch_bytes = -1;  // NVIDIA: stack frame; AMD: private segment (scratch) per thread
};

struct CompiledKernel {
  std::string name_expression;  // as requested, e.g. "moetune::moe_stage1<Cfg<...>>"
  std::string lowered_name;     // the symbol to look up in the loaded module
  ResourceUsage resources;
};

struct CompileResult {
  bool ok = false;
  std::vector<std::byte> image;  // cubin (NVIDIA) or AMDGPU ELF code object; empty if !ok
  std::vector<CompiledKernel> kernels;  // one per KernelSource::kernel_names, in that order
  std::string log;  // the compiler's diagnostics (warnings on success, errors on failure)
};

}  // namespace moetune::jit
