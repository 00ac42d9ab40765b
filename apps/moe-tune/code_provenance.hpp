#pragma once
// What every run's provenance says about the code that produced it, whatever the command
// (tune, requalify): the runtime compiler, the git revision, the decision code's digest, the
// exact command line and the SHA-256 of every kernel source. One place, so that a report of
// `tune` and one of `requalify` can never disagree on how the same build is described.
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/tune/tune_report.hpp"

namespace moetune::app {

// The machine fields (device, arch, cu_num, driver, sampler) and the search space are the
// caller's to add.
[[nodiscard]] tune::Provenance code_provenance(const exec::UnitCompiler& compiler);

}  // namespace moetune::app
