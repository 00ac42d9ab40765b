#include "autotune/jit/hiprtc_compiler.hpp"

#include <fmt/format.h>

#include <mutex>

#include "autotune/core/error.hpp"
#include "autotune/jit/amdgpu_metadata.hpp"
#include "autotune/jit/clang_offload_bundle.hpp"
#include "autotune/jit/dynamic_library.hpp"

namespace moetune::jit {
namespace {

// hipRTC's C API, declared here rather than through <hip/hiprtc.h> so that this library needs
// no HIP headers to build (the library itself is found at run time). The ABI is HIP's:
// hiprtcResult is an int-sized enum, hiprtcProgram an opaque pointer.
using hiprtc_result = int;
using hiprtc_program = struct moetune_hiprtc_program*;
constexpr hiprtc_result hiprtc_success = 0;
constexpr hiprtc_result hiprtc_error_compilation = 6;  // HIPRTC_ERROR_COMPILATION

struct HiprtcApi {
  explicit HiprtcApi(const DynamicLibrary& lib) {
    lib.bind(version, "hiprtcVersion");
    lib.bind(get_error_string, "hiprtcGetErrorString");
    lib.bind(create_program, "hiprtcCreateProgram");
    lib.bind(destroy_program, "hiprtcDestroyProgram");
    lib.bind(add_name_expression, "hiprtcAddNameExpression");
    lib.bind(compile_program, "hiprtcCompileProgram");
    lib.bind(get_program_log_size, "hiprtcGetProgramLogSize");
    lib.bind(get_program_log, "hiprtcGetProgramLog");
    lib.bind(get_code_size, "hiprtcGetCodeSize");
    lib.bind(get_code, "hiprtcGetCode");
    lib.bind(get_lowered_name, "hiprtcGetLoweredName");
  }
  hiprtc_result (*version)(int*, int*) = nullptr;
  const char* (*get_error_string)(hiprtc_result) = nullptr;
  hiprtc_result (*create_program)(hiprtc_program*, const char*, const char*, int, const char**,
                                  const char**) = nullptr;
  hiprtc_result (*destroy_program)(hiprtc_program*) = nullptr;
  hiprtc_result (*add_name_expression)(hiprtc_program, const char*) = nullptr;
  hiprtc_result (*compile_program)(hiprtc_program, int, const char**) = nullptr;
  hiprtc_result (*get_program_log_size)(hiprtc_program, std::size_t*) = nullptr;
  hiprtc_result (*get_program_log)(hiprtc_program, char*) = nullptr;
  hiprtc_result (*get_code_size)(hiprtc_program, std::size_t*) = nullptr;
  hiprtc_result (*get_code)(hiprtc_program, char*) = nullptr;
  hiprtc_result (*get_lowered_name)(hiprtc_program, const char*, const char**) = nullptr;
};

const DynamicLibrary& hiprtc_library() {
  static const DynamicLibrary library(
      {"libhiprtc.so", "libamdhip64.so.5", "libamdhip64.so", "/opt/rocm/lib/libhiprtc.so"},
      "hipRTC (libhiprtc.so, or libamdhip64.so.5 which contains it) for gfx90a");
  return library;
}

const HiprtcApi& hiprtc() {
  static const HiprtcApi api(hiprtc_library());
  return api;
}

// hipRTC 5.2 goes through AMD's comgr, which is not reliably thread-safe in that release:
// one compilation at a time per process (clang's subprocess path is the parallel one).
std::mutex& hiprtc_mutex() {
  static std::mutex mutex;
  return mutex;
}

void check(hiprtc_result rc, const char* call) {
  if (rc != hiprtc_success) {
    throw Error(fmt::format("{} failed: {}", call, hiprtc().get_error_string(rc)));
  }
}

class Program {
 public:
  explicit Program(hiprtc_program program) : m_program(program) {}
  ~Program() { (void)hiprtc().destroy_program(&m_program); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  [[nodiscard]] hiprtc_program get() const { return m_program; }

 private:
  hiprtc_program m_program;
};

class HiprtcCompiler final : public Compiler {
 public:
  explicit HiprtcCompiler(const CompilerConfig& config)
      : m_arch(config.arch),
        m_headers(detail::resolve_headers(config)),
        m_extra_options(config.extra_options) {
    int major = 0;
    int minor = 0;
    check(hiprtc().version(&major, &minor), "hiprtcVersion");
    m_identity = fmt::format("hiprtc {}.{} {}", major, minor, hiprtc_library().resolved_file());
    (void)llvm_readelf_path();  // fail now, not per candidate, if resources cannot be read
  }

  [[nodiscard]] std::string_view kind() const override { return "hiprtc"; }
  [[nodiscard]] const std::string& arch() const override { return m_arch; }
  [[nodiscard]] const std::string& identity() const override { return m_identity; }
  [[nodiscard]] const std::vector<EmbeddedFile>& headers() const override { return m_headers; }

  [[nodiscard]] std::vector<std::string> options(const KernelSource& source) const override {
    return detail::assemble_options({"--offload-arch=" + m_arch, "-O3", "-std=c++17"}, source,
                                    m_extra_options);
  }

  [[nodiscard]] CompileResult compile(const KernelSource& source) const override {
    auto headers = detail::header_arrays(m_headers);  // hipRTC takes non-const arrays
    std::vector<std::string> const option_strings = options(source);
    auto option_ptrs = detail::c_strings(option_strings);

    CompileResult result;
    {
      std::lock_guard const lock(hiprtc_mutex());
      hiprtc_program raw{};
      check(hiprtc().create_program(&raw, source.source.c_str(),
                                    (source.unit_name + ".hip").c_str(),
                                    static_cast<int>(m_headers.size()), headers.texts.data(),
                                    headers.names.data()),
            "hiprtcCreateProgram");
      Program const program(raw);
      for (auto const& name : source.kernel_names) {
        check(hiprtc().add_name_expression(program.get(), name.c_str()),
              "hiprtcAddNameExpression");
      }
      hiprtc_result const compiled = hiprtc().compile_program(
          program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
      std::size_t log_size = 0;
      check(hiprtc().get_program_log_size(program.get(), &log_size), "hiprtcGetProgramLogSize");
      result.log.assign(log_size, '\0');
      if (log_size > 0) {
        check(hiprtc().get_program_log(program.get(), result.log.data()), "hiprtcGetProgramLog");
      }
      while (!result.log.empty() && result.log.back() == '\0') result.log.pop_back();
      if (compiled == hiprtc_error_compilation) return result;
      check(compiled, "hiprtcCompileProgram");

      std::size_t size = 0;
      check(hiprtc().get_code_size(program.get(), &size), "hiprtcGetCodeSize");
      result.image.resize(size);
      check(hiprtc().get_code(program.get(), reinterpret_cast<char*>(result.image.data())),
            "hiprtcGetCode");
      for (auto const& name : source.kernel_names) {
        const char* lowered = nullptr;
        check(hiprtc().get_lowered_name(program.get(), name.c_str(), &lowered),
              "hiprtcGetLoweredName");
        result.kernels.push_back(CompiledKernel{name, lowered, {}});
      }
    }
    // Some hipRTC releases return a clang offload bundle rather than the bare code object.
    if (!is_elf(result.image)) result.image = unbundle_code_object(result.image, m_arch);
    auto const resources = read_amdgpu_resources(result.image);
    for (auto& kernel : result.kernels) {
      if (auto const it = resources.find(kernel.lowered_name); it != resources.end()) {
        kernel.resources = it->second;
      }
    }
    result.ok = true;
    return result;
  }

 private:
  std::string m_arch;
  std::vector<EmbeddedFile> m_headers;
  std::vector<std::string> m_extra_options;
  std::string m_identity;
};

}  // namespace

std::unique_ptr<Compiler> make_hiprtc_compiler(const CompilerConfig& config) {
  return std::make_unique<HiprtcCompiler>(config);
}

}  // namespace moetune::jit
