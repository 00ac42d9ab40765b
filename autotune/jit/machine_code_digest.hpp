#pragma once
// A digest of what a compiled unit executes, so that two candidates that differ by name but
// not by code (on AMD, waves 0 and 1 emit the same launch bounds) are recognised as one
// (tune/candidate_pairs.hpp times such twins once, or not at all when they are the baseline's).
//
// The image bytes as a whole are no such digest: the unit's kernel names (which spell every
// template argument) sit in the symbol and string tables, in the AMDGPU metadata note and in
// cubin section names. So for an ELF image (cubin, AMDGPU code object) the digest covers, in
// section order, each section's type, flags and contents except the symbol, string, hash and
// dynamic tables and the non-executed .comment/.debug sections, with every occurrence of a
// kernel's lowered name replaced by its index; a section's name is never hashed. What stays
// is the machine code, kernel descriptors, .nv.info attributes, relocations and metadata.
// A non-ELF image is digested whole (no twin is then found that is not byte-identical).
#include <string>

#include "autotune/jit/compile_result.hpp"

namespace moetune::jit {

// Hex SHA-256; empty when the unit did not compile (no code, no twin).
[[nodiscard]] std::string machine_code_digest(const CompileResult& result);

}  // namespace moetune::jit
