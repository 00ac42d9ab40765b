#include "autotune/jit/nvrtc_compiler.hpp"

#include <fmt/format.h>
#include <nvrtc.h>

#include "autotune/core/error.hpp"
#include "autotune/jit/dynamic_library.hpp"
#include "autotune/jit/ptxas_log.hpp"

namespace moetune::jit {
namespace {

// The NVRTC entry points we use; NVRTC's C API is unversioned, so plain dlsym is right here.
struct NvrtcApi {
  explicit NvrtcApi(const DynamicLibrary& lib) {
    lib.bind(version, "nvrtcVersion");
    lib.bind(get_error_string, "nvrtcGetErrorString");
    lib.bind(create_program, "nvrtcCreateProgram");
    lib.bind(destroy_program, "nvrtcDestroyProgram");
    lib.bind(add_name_expression, "nvrtcAddNameExpression");
    lib.bind(compile_program, "nvrtcCompileProgram");
    lib.bind(get_program_log_size, "nvrtcGetProgramLogSize");
    lib.bind(get_program_log, "nvrtcGetProgramLog");
    lib.bind(get_cubin_size, "nvrtcGetCUBINSize");
    lib.bind(get_cubin, "nvrtcGetCUBIN");
    lib.bind(get_lowered_name, "nvrtcGetLoweredName");
  }
  decltype(&::nvrtcVersion) version{};
  decltype(&::nvrtcGetErrorString) get_error_string{};
  decltype(&::nvrtcCreateProgram) create_program{};
  decltype(&::nvrtcDestroyProgram) destroy_program{};
  decltype(&::nvrtcAddNameExpression) add_name_expression{};
  decltype(&::nvrtcCompileProgram) compile_program{};
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size{};
  decltype(&::nvrtcGetProgramLog) get_program_log{};
  decltype(&::nvrtcGetCUBINSize) get_cubin_size{};
  decltype(&::nvrtcGetCUBIN) get_cubin{};
  decltype(&::nvrtcGetLoweredName) get_lowered_name{};
};

const DynamicLibrary& nvrtc_library() {
  // The soname first (LD_LIBRARY_PATH, ldconfig), then the toolkit's own copy.
  static const DynamicLibrary library(
      {"libnvrtc.so.13", std::string(MOETUNE_CUDA_ROOT) + "/lib64/libnvrtc.so.13",
       "/usr/local/cuda/lib64/libnvrtc.so.13"},
      "NVRTC (libnvrtc.so.13, CUDA 13) for sm_90");
  return library;
}

const NvrtcApi& nvrtc() {
  static const NvrtcApi api(nvrtc_library());
  return api;
}

// The machine target NVRTC compiles an arch's units for. Every sm_90 unit is built for
// sm_90a: each compute-capability-9.0 GPU (H100, H200) runs sm_90a code, and only that target
// has the warpgroup MMA the wgmma main loop uses (the other kernels compile to the same code).
std::string target_arch(const std::string& arch) { return arch == "sm_90" ? "sm_90a" : arch; }

// Destroys the program on every path out of compile().
class Program {
 public:
  explicit Program(nvrtcProgram program) : m_program(program) {}
  ~Program() { (void)nvrtc().destroy_program(&m_program); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  [[nodiscard]] nvrtcProgram get() const { return m_program; }

 private:
  nvrtcProgram m_program;
};

class NvrtcCompiler final : public Compiler {
 public:
  explicit NvrtcCompiler(const CompilerConfig& config)
      : m_arch(config.arch),
        m_headers(detail::resolve_headers(config)),
        m_extra_options(config.extra_options) {
    int major = 0;
    int minor = 0;
    check(nvrtc().version(&major, &minor), "nvrtcVersion");
    // nvrtcVersion gives major.minor only; the library's real file name carries the patch level
    // (libnvrtc.so.13.0.88), so a toolkit update changes the cache key.
    m_identity = fmt::format("nvrtc {}.{} {}", major, minor, nvrtc_library().resolved_file());
  }

  [[nodiscard]] std::string_view kind() const override { return "nvrtc"; }
  [[nodiscard]] const std::string& arch() const override { return m_arch; }
  [[nodiscard]] const std::string& identity() const override { return m_identity; }
  [[nodiscard]] const std::vector<EmbeddedFile>& headers() const override { return m_headers; }

  [[nodiscard]] std::vector<std::string> options(const KernelSource& source) const override {
    return detail::assemble_options(
        {
            "--gpu-architecture=" + target_arch(m_arch),
            "-std=c++17",
            "--ptxas-options=-v",  // registers, shared memory and spills in the log
        },
        source, m_extra_options);
  }

  [[nodiscard]] CompileResult compile(const KernelSource& source) const override {
    auto const headers = detail::header_arrays(m_headers);
    nvrtcProgram raw{};
    check(nvrtc().create_program(&raw, source.source.c_str(), (source.unit_name + ".cu").c_str(),
                                 static_cast<int>(m_headers.size()), headers.texts.data(),
                                 headers.names.data()),
          "nvrtcCreateProgram");
    Program const program(raw);
    for (auto const& name : source.kernel_names) {
      check(nvrtc().add_name_expression(program.get(), name.c_str()), "nvrtcAddNameExpression");
    }
    std::vector<std::string> const option_strings = options(source);
    auto const option_ptrs = detail::c_strings(option_strings);

    nvrtcResult const compiled = nvrtc().compile_program(
        program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
    CompileResult result;
    result.log = program_log(program.get());
    if (compiled == NVRTC_ERROR_COMPILATION) return result;  // ok == false: the log says why
    check(compiled, "nvrtcCompileProgram");

    std::size_t size = 0;
    check(nvrtc().get_cubin_size(program.get(), &size), "nvrtcGetCUBINSize");
    result.image.resize(size);
    check(nvrtc().get_cubin(program.get(), reinterpret_cast<char*>(result.image.data())),
          "nvrtcGetCUBIN");

    auto const resources = parse_ptxas_log(result.log);
    for (auto const& name : source.kernel_names) {
      const char* lowered = nullptr;
      check(nvrtc().get_lowered_name(program.get(), name.c_str(), &lowered),
            "nvrtcGetLoweredName");
      CompiledKernel kernel{name, lowered, {}};
      if (auto const it = resources.find(kernel.lowered_name); it != resources.end()) {
        kernel.resources = it->second;
      }
      result.kernels.push_back(std::move(kernel));
    }
    result.ok = true;
    return result;
  }

 private:
  static void check(nvrtcResult rc, const char* call) {
    if (rc != NVRTC_SUCCESS) {
      throw Error(fmt::format("{} failed: {}", call, nvrtc().get_error_string(rc)));
    }
  }

  static std::string program_log(nvrtcProgram program) {
    std::size_t size = 0;
    check(nvrtc().get_program_log_size(program, &size), "nvrtcGetProgramLogSize");
    std::string log(size, '\0');
    check(nvrtc().get_program_log(program, log.data()), "nvrtcGetProgramLog");
    while (!log.empty() && log.back() == '\0') log.pop_back();
    return log;
  }

  std::string m_arch;
  std::vector<EmbeddedFile> m_headers;
  std::vector<std::string> m_extra_options;
  std::string m_identity;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler(const CompilerConfig& config) {
  return std::make_unique<NvrtcCompiler>(config);
}

}  // namespace moetune::jit
