#pragma once
// clang's HIP device output is a "clang offload bundle" (a container keyed by target triple);
// the GPU loads the ELF code object inside it. clang-offload-bundler-22 takes it out.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace moetune::jit {

// The code object for `arch` inside `bundle`. Throws Error if the bundler is missing or the
// bundle holds no such target.
[[nodiscard]] std::vector<std::byte> unbundle_code_object(std::span<const std::byte> bundle,
                                                          const std::string& arch);

// The bundler executable (clang-offload-bundler-22, else clang-offload-bundler).
[[nodiscard]] std::string offload_bundler_path();

}  // namespace moetune::jit
