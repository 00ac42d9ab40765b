#include "autotune/jit/clang_offload_bundle.hpp"

#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/core/subprocess.hpp"
#include "autotune/jit/temp_dir.hpp"

namespace moetune::jit {

std::string offload_bundler_path() {
  for (auto const* name : {"clang-offload-bundler-22", "clang-offload-bundler"}) {
    if (auto const path = find_program(name, {"/usr/lib/llvm-22/bin"})) return path->string();
  }
  throw Error(
      "clang-offload-bundler-22 is not installed (needed for AMDGPU code objects; "
      "Debian/Ubuntu: apt-get install clang-tools-22)");
}

std::vector<std::byte> unbundle_code_object(std::span<const std::byte> bundle,
                                            const std::string& arch) {
  TempDir const dir("moetune-unbundle");
  auto const input = dir.path() / "in.bundle";
  auto const output = dir.path() / "out.elf";
  write_scratch_file(input, bundle);
  ProcessResult const run = run_process(
      {offload_bundler_path(), "--unbundle", "--type=o", "--input=" + input.string(),
       "--targets=hipv4-amdgcn-amd-amdhsa--" + arch, "--output=" + output.string()});
  if (run.exit_code != 0) {
    throw Error(fmt::format("clang-offload-bundler could not extract the {} code object ({}): {}",
                            arch, run.exit_code, run.output));
  }
  std::string const bytes = read_file(output);
  auto const* begin = reinterpret_cast<const std::byte*>(bytes.data());
  return {begin, begin + bytes.size()};
}

}  // namespace moetune::jit
