#pragma once
// The command-line face of worker isolation (autotune/measure/remote_sampler.hpp): the options
// `tune` offers for it and the RemoteSampler they describe, running this very binary's hidden
// `worker` subcommand. Kept apart so any command that times candidates can offer the same.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "autotune/measure/remote_sampler.hpp"

namespace moetune::app {

struct IsolationOptions {
  bool isolate = false;     // --isolate: also for a replay (a GPU run isolates by default)
  bool no_isolate = false;  // --no-isolate: time in this process (a fault ends the run)
  double watchdog_s = 0;    // --watchdog: cap on every call's deadline; 0 = per-call defaults
  std::string test_fault;   // --test-fault / MOETUNE_TEST_FAULT (GPU worker only)

  [[nodiscard]] bool isolated(bool gpu_run) const {
    return !no_isolate && (gpu_run || isolate);
  }
};

void add_isolation_options(CLI::App& cmd, IsolationOptions& options);

// A RemoteSampler whose workers run `<this binary> worker <worker_args...>`.
[[nodiscard]] std::unique_ptr<measure::RemoteSampler> isolated_sampler(
    const IsolationOptions& options, std::vector<std::string> worker_args);

}  // namespace moetune::app
