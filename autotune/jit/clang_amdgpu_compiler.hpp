#pragma once
// The offline AMDGPU compiler for gfx942 / gfx950: Debian's clang-22 + ld.lld-22 build
// self-contained device code (no HIP headers, no ROCm device libraries) in a subprocess.
//
// clang has no name-expression API, so the lowered names come from clang itself: a second,
// front-end-only run compiles the unit with one probe per requested name appended,
//   extern "C" __attribute__((device, used)) void* moetune_name_expr_<i> = (void*)&<expr>;
// to LLVM IR, where each probe's initializer is the mangled symbol of exactly the function
// the expression names (overloads, aliases, default template arguments all resolved by the
// compiler). No demangling or textual matching is involved. The code object itself is built
// from the unit plus host-side anchors `static void a() { (void)&<expr>; }`, which make clang
// instantiate and emit each requested kernel without adding any device code.
#include <memory>

#include "autotune/jit/compiler.hpp"

namespace moetune::jit {

[[nodiscard]] std::unique_ptr<Compiler> make_clang_amdgpu_compiler(const CompilerConfig& config);

}  // namespace moetune::jit
