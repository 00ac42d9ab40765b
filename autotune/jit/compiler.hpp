#pragma once
// One interface over the three runtime compilers, chosen by target arch:
//   sm_90, sm_90a    NVRTC (CUDA 13), dlopen'ed libnvrtc.so.13            nvrtc_compiler.hpp
//   gfx90a           hipRTC (HIP 5.2 / ROCm), dlopen'ed libamdhip64      hiprtc_compiler.hpp
//   gfx942, gfx950   clang-22 + ld.lld-22 run as subprocesses            clang_amdgpu_compiler.hpp
// Every compiler sees only the given headers (the embedded kernels/ files by default): no host
// or vendor include directory is ever on the path, so a kernel that compiles here compiles on
// the GPU host too.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/jit/compile_result.hpp"
#include "autotune/jit/embedded_kernels.hpp"
#include "autotune/jit/kernel_source.hpp"

namespace moetune::jit {

struct CompilerConfig {
  std::string arch;  // "sm_90", "sm_90a", "gfx90a", "gfx942", "gfx950"
  // The headers kernel sources may #include; nullopt = embedded_kernel_files().
  std::optional<std::vector<EmbeddedFile>> headers;
  // Options appended to the compiler's own (e.g. "-lineinfo"); part of the cache key.
  std::vector<std::string> extra_options;
};

class Compiler {
 public:
  virtual ~Compiler() = default;

  // "nvrtc", "hiprtc" or "clang".
  [[nodiscard]] virtual std::string_view kind() const = 0;
  [[nodiscard]] virtual const std::string& arch() const = 0;
  // Compiler name and exact version ("nvrtc 13.0", "clang version 22.1.8 ..."): cache key and
  // provenance.
  [[nodiscard]] virtual const std::string& identity() const = 0;
  // The complete option list compile() passes (defines of `source` included): cache key.
  [[nodiscard]] virtual std::vector<std::string> options(const KernelSource& source) const = 0;
  [[nodiscard]] virtual const std::vector<EmbeddedFile>& headers() const = 0;

  // Compiles one unit. A compile error is a result with ok == false and the log; only a
  // broken tool chain (a crash, a missing library) throws. Safe to call from many threads.
  [[nodiscard]] virtual CompileResult compile(const KernelSource& source) const = 0;
};

// The compiler for `config.arch`. Throws Error naming the arch and what is missing when the
// arch is unknown or its compiler is not installed (so CI fails loudly instead of skipping).
[[nodiscard]] std::unique_ptr<Compiler> make_compiler(const CompilerConfig& config);

// The extra options that put source line tables into `arch`'s kernels, so that a profiler
// (Nsight Compute's source page) maps its per-instruction counters to lines of kernels/ (NVRTC's
// -lineinfo: no change to optimisation, its own cache entries since options key the cache).
// Throws Error on the AMD targets, whose runtime compilers are not given line tables here.
[[nodiscard]] std::vector<std::string> line_info_options(std::string_view arch);

// Every arch make_compiler accepts.
[[nodiscard]] const std::vector<std::string>& supported_archs();

namespace detail {
// Every compiler's option list, in the one order the cache key hashes: its own `base`
// options, then "-DNAME=VALUE" for each define of the source, then the config's extras.
[[nodiscard]] std::vector<std::string> assemble_options(std::vector<std::string> base,
                                                        const KernelSource& source,
                                                        const std::vector<std::string>& extra);
// Pointers to the strings, for the C APIs of NVRTC and hipRTC (valid while the strings live).
[[nodiscard]] std::vector<const char*> c_strings(const std::vector<std::string>& strings);
// The in-memory headers as the parallel text/name arrays nvrtc/hiprtcCreateProgram take.
struct HeaderArrays {
  std::vector<const char*> texts;
  std::vector<const char*> names;
};
[[nodiscard]] HeaderArrays header_arrays(const std::vector<EmbeddedFile>& headers);
// The headers of a config, resolving nullopt to the embedded files.
[[nodiscard]] std::vector<EmbeddedFile> resolve_headers(const CompilerConfig& config);
// The first `max_lines` lines of a log, for tables and error messages.
[[nodiscard]] std::string first_lines(std::string_view log, int max_lines);
}  // namespace detail

}  // namespace moetune::jit
