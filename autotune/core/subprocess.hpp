#pragma once
// Runs an external tool (the offline AMDGPU compiler: clang-22, clang-offload-bundler-22,
// llvm-readelf-22) and captures what it prints. posix_spawn rather than fork, because the
// compile pool calls this from many threads at once and a fork of a threaded process may
// deadlock before exec.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace moetune {

struct ProcessResult {
  int exit_code = -1;  // the tool's exit status; 128 + signal number if it was killed
  std::string output;  // stdout and stderr, interleaved as the tool wrote them
};

// argv[0] is looked up on PATH if it has no slash. `working_dir`, if given, is where the tool
// runs. Throws Error only when the tool cannot be started at all; a tool that runs and fails
// is a ProcessResult with a non-zero exit_code.
[[nodiscard]] ProcessResult run_process(const std::vector<std::string>& argv,
                                        const std::filesystem::path& working_dir = {});

// The full path of an executable: each of `extra_dirs`, then PATH. Empty if none is found.
[[nodiscard]] std::optional<std::filesystem::path> find_program(
    const std::string& name, const std::vector<std::filesystem::path>& extra_dirs = {});

}  // namespace moetune
