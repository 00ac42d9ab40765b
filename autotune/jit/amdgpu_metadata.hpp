#pragma once
// Resource figures of an AMDGPU code object, from its NT_AMDGPU_METADATA note as printed by
// `llvm-readelf-22 --notes` (one YAML map per kernel under amdhsa.kernels: .name, .vgpr_count,
// .agpr_count, .sgpr_count, .group_segment_fixed_size, .private_segment_fixed_size,
// .vgpr_spill_count). Used for hipRTC's and clang's output alike.
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "autotune/jit/compile_result.hpp"

namespace moetune::jit {

// Figures per kernel symbol (mangled name) from readelf's --notes text.
[[nodiscard]] std::map<std::string, ResourceUsage> parse_amdgpu_notes(std::string_view notes);

// Runs llvm-readelf on an ELF code object (written to a temporary file) and parses it.
// Throws Error if llvm-readelf is missing or fails.
[[nodiscard]] std::map<std::string, ResourceUsage> read_amdgpu_resources(
    std::span<const std::byte> elf);

// The llvm-readelf executable used (llvm-readelf-22, else llvm-readelf on PATH).
[[nodiscard]] std::string llvm_readelf_path();

// True if `image` starts with the ELF magic.
[[nodiscard]] bool is_elf(std::span<const std::byte> image);

}  // namespace moetune::jit
