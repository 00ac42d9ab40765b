#pragma once
// The kernel sources of kernels/, embedded at build time (cmake/embed_kernels.cmake), so that
// the JIT needs no source tree at run time and provenance can hash exactly what it compiled.
#include <string>
#include <vector>

namespace moetune::jit {

struct EmbeddedFile {
  std::string name;  // bare file name, as kernel sources #include it ("moetune_portability.h")
  std::string text;
};

[[nodiscard]] const std::vector<EmbeddedFile>& embedded_kernel_files();

}  // namespace moetune::jit
