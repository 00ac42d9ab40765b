#include "autotune/jit/compiler.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/jit/clang_amdgpu_compiler.hpp"
#include "autotune/jit/hiprtc_compiler.hpp"
#include "autotune/jit/nvrtc_compiler.hpp"

namespace moetune::jit {

const std::vector<std::string>& supported_archs() {
  static const std::vector<std::string> archs = {"sm_90", "sm_90a", "gfx90a", "gfx942", "gfx950"};
  return archs;
}

std::unique_ptr<Compiler> make_compiler(const CompilerConfig& config) {
  // Adding an arch: map it to a compiler here and to the list above (docs/jit.md).
  std::string const& arch = config.arch;
  if (arch == "sm_90" || arch == "sm_90a") return make_nvrtc_compiler(config);
  if (arch == "gfx90a") return make_hiprtc_compiler(config);
  if (arch == "gfx942" || arch == "gfx950") return make_clang_amdgpu_compiler(config);
  throw Error(fmt::format("no compiler for arch '{}'; supported: {}", arch,
                          fmt::join(supported_archs(), ", ")));
}

std::vector<std::string> line_info_options(std::string_view arch) {
  if (arch == "sm_90" || arch == "sm_90a") return {"-lineinfo"};
  throw Error(fmt::format("line tables are built only for NVIDIA targets (NVRTC -lineinfo); {} has none here",
                          arch));
}

namespace detail {

std::vector<std::string> assemble_options(std::vector<std::string> base,
                                          const KernelSource& source,
                                          const std::vector<std::string>& extra) {
  for (auto const& define : source.defines) base.push_back("-D" + define);
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  out.reserve(strings.size());
  for (auto const& s : strings) out.push_back(s.c_str());
  return out;
}

HeaderArrays header_arrays(const std::vector<EmbeddedFile>& headers) {
  HeaderArrays out;
  for (auto const& header : headers) {
    out.texts.push_back(header.text.c_str());
    out.names.push_back(header.name.c_str());
  }
  return out;
}

std::vector<EmbeddedFile> resolve_headers(const CompilerConfig& config) {
  return config.headers ? *config.headers : embedded_kernel_files();
}

std::string first_lines(std::string_view log, int max_lines) {
  std::string out;
  int lines = 0;
  std::size_t start = 0;
  while (start < log.size() && lines < max_lines) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    if (end > start) {  // skip blank lines
      if (!out.empty()) out += '\n';
      out += log.substr(start, end - start);
      ++lines;
    }
    start = end + 1;
  }
  return out;
}

}  // namespace detail
}  // namespace moetune::jit
