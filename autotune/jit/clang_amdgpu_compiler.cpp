#include "autotune/jit/clang_amdgpu_compiler.hpp"

#include <fmt/format.h>

#include <regex>
#include <sstream>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/core/subprocess.hpp"
#include "autotune/jit/amdgpu_metadata.hpp"
#include "autotune/jit/clang_offload_bundle.hpp"
#include "autotune/jit/temp_dir.hpp"

namespace moetune::jit {
namespace {

const std::vector<std::filesystem::path> llvm_dirs = {"/usr/lib/llvm-22/bin"};

std::string require_tool(const char* name) {
  if (auto const path = find_program(name, llvm_dirs)) return path->string();
  throw Error(fmt::format(
      "{} is not installed; the offline AMDGPU compiler for gfx942/gfx950 needs clang-22, "
      "lld-22, llvm-22 and clang-tools-22 "
      "(Debian/Ubuntu: apt-get install clang-22 lld-22 llvm-22 clang-tools-22)",
      name));
}

std::string probe_symbol(std::size_t index) { return fmt::format("moetune_name_expr_{}", index); }

// The unit with one probe per name expression appended (see the header comment).
std::string with_name_probes(const KernelSource& source) {
  std::string text = source.source;
  text += "\n// moe-tune name-expression probes\n";
  for (std::size_t i = 0; i < source.kernel_names.size(); ++i) {
    std::string const& expr = source.kernel_names[i];
    text += fmt::format(
        "extern \"C\" __attribute__((device, used)) void* {} = (void*){}{};\n", probe_symbol(i),
        expr.starts_with('&') ? "" : "&", expr);
  }
  return text;
}

// The unit with one host-side anchor per name expression: odr-using a kernel from host code
// makes clang's device compilation instantiate and emit it (as a <<<>>> launch would), while
// adding no device code. NVRTC and hipRTC do this themselves for added name expressions.
std::string with_instantiation_anchors(const KernelSource& source) {
  std::string text = source.source;
  text += "\n// moe-tune instantiation anchors\n";
  for (std::size_t i = 0; i < source.kernel_names.size(); ++i) {
    std::string const& expr = source.kernel_names[i];
    text += fmt::format("[[maybe_unused]] static void moetune_anchor_{}() {{ (void){}{}; }}\n", i,
                        expr.starts_with('&') ? "" : "&", expr);
  }
  return text;
}

// Reads "@moetune_name_expr_3 = ... global ptr @_ZN...," lines from the probe run's IR.
std::vector<std::string> lowered_names_from_ir(const std::string& ir, std::size_t count) {
  static const std::regex probe(
      R"re(^@moetune_name_expr_(\d+) = .*\bptr @("[^"]+"|[A-Za-z0-9_.$]+))re");
  std::vector<std::string> names(count);
  std::istringstream lines(ir);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (!line.starts_with("@moetune_name_expr_") || !std::regex_search(line, match, probe)) {
      continue;
    }
    std::size_t const index = std::stoul(match[1].str());
    std::string symbol = match[2].str();
    if (symbol.size() >= 2 && symbol.front() == '"') symbol = symbol.substr(1, symbol.size() - 2);
    if (index < count) names[index] = symbol;
  }
  return names;
}

class ClangAmdgpuCompiler final : public Compiler {
 public:
  explicit ClangAmdgpuCompiler(const CompilerConfig& config)
      : m_arch(config.arch),
        m_headers(detail::resolve_headers(config)),
        m_extra_options(config.extra_options),
        m_clang(require_tool("clang-22")),
        m_lld(require_tool("ld.lld-22")) {
    (void)offload_bundler_path();  // fail at construction, not per candidate
    (void)llvm_readelf_path();
    ProcessResult const version = run_process({m_clang, "--version"});
    if (version.exit_code != 0) {
      throw Error(fmt::format("'{} --version' failed: {}", m_clang, version.output));
    }
    m_identity = version.output.substr(0, version.output.find('\n'));
  }

  [[nodiscard]] std::string_view kind() const override { return "clang"; }
  [[nodiscard]] const std::string& arch() const override { return m_arch; }
  [[nodiscard]] const std::string& identity() const override { return m_identity; }
  [[nodiscard]] const std::vector<EmbeddedFile>& headers() const override { return m_headers; }

  // The options that decide the generated code; paths (temp dirs, the linker) are added at
  // compile time and kept out of the cache key.
  [[nodiscard]] std::vector<std::string> options(const KernelSource& source) const override {
    return detail::assemble_options(
        {"-x", "hip", "--cuda-device-only", "--offload-arch=" + m_arch,
         // Self-contained device code: no HIP headers, no ROCm device libraries, and no host
         // or builtin include directories, so kernels see exactly the embedded headers.
         "-nogpulib", "-nogpuinc", "-nostdinc", "-std=c++17", "-O3",
         // clang derives the compilation-unit id (the __hip_cuid_* symbol) from the input's
         // path, which is a fresh temporary directory: fix it so rebuilds are bit-identical.
         "-cuid=moetune"},
        source, m_extra_options);
  }

  [[nodiscard]] CompileResult compile(const KernelSource& source) const override {
    TempDir const dir("moetune-clang");
    auto const include_dir = dir.path() / "include";
    std::filesystem::create_directories(include_dir);
    for (auto const& header : m_headers) write_scratch_file(include_dir / header.name, header.text);
    auto const unit = dir.path() / "unit.hip";
    write_scratch_file(unit, with_instantiation_anchors(source));

    CompileResult result;
    std::vector<std::string> argv = {m_clang};
    for (auto& option : options(source)) argv.push_back(std::move(option));
    std::vector<std::string> const common_tail = {"-I", include_dir.string()};
    argv.insert(argv.end(), common_tail.begin(), common_tail.end());
    std::vector<std::string> build = argv;
    auto const bundle = dir.path() / "unit.bundle";
    build.insert(build.end(),
                 {"--ld-path=" + m_lld, "-o", bundle.string(), unit.string()});
    ProcessResult const compiled = run_process(build, dir.path());
    result.log = compiled.output;
    if (compiled.exit_code != 0) return result;

    std::string const bundle_bytes = read_file(bundle);
    auto const* begin = reinterpret_cast<const std::byte*>(bundle_bytes.data());
    std::span<const std::byte> const bytes(begin, bundle_bytes.size());
    result.image = is_elf(bytes) ? std::vector<std::byte>(bytes.begin(), bytes.end())
                                 : unbundle_code_object(bytes, m_arch);

    std::vector<std::string> lowered;
    if (!source.kernel_names.empty()) {
      lowered = lower_names(source, argv, dir.path(), result.log);
      if (lowered.empty()) return CompileResult{false, {}, {}, result.log};
    }
    auto const resources = read_amdgpu_resources(result.image);
    for (std::size_t i = 0; i < source.kernel_names.size(); ++i) {
      CompiledKernel kernel{source.kernel_names[i], lowered[i], {}};
      if (auto const it = resources.find(kernel.lowered_name); it != resources.end()) {
        kernel.resources = it->second;
      }
      result.kernels.push_back(std::move(kernel));
    }
    result.ok = true;
    return result;
  }

 private:
  // Front-end run over the unit plus probes; returns one lowered name per expression, or an
  // empty vector (with the reason appended to `log`) if any expression does not resolve.
  std::vector<std::string> lower_names(const KernelSource& source, std::vector<std::string> argv,
                                       const std::filesystem::path& dir, std::string& log) const {
    auto const probe_unit = dir / "names.hip";
    auto const ir = dir / "names.ll";
    write_scratch_file(probe_unit, with_name_probes(source));
    // -O0: the probes only need the front end; nothing is optimised away (they are `used`).
    for (auto& arg : argv) {
      if (arg == "-O3") arg = "-O0";
    }
    argv.insert(argv.end(), {"-emit-llvm", "-S", "-o", ir.string(), probe_unit.string()});
    ProcessResult const run = run_process(argv, dir);
    if (run.exit_code != 0) {
      log += "\nmoe-tune: a kernel name expression does not name a kernel of this unit:\n";
      log += run.output;
      return {};
    }
    std::vector<std::string> names = lowered_names_from_ir(read_file(ir), source.kernel_names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i].empty()) {
        log += fmt::format("\nmoe-tune: could not lower name expression '{}'\n",
                           source.kernel_names[i]);
        return {};
      }
    }
    return names;
  }

  std::string m_arch;
  std::vector<EmbeddedFile> m_headers;
  std::vector<std::string> m_extra_options;
  std::string m_clang;
  std::string m_lld;
  std::string m_identity;
};

}  // namespace

std::unique_ptr<Compiler> make_clang_amdgpu_compiler(const CompilerConfig& config) {
  return std::make_unique<ClangAmdgpuCompiler>(config);
}

}  // namespace moetune::jit
