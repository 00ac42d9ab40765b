#include "apps/moe-tune/isolation_options.hpp"

#include <filesystem>

#include "autotune/measure/test_fault.hpp"

namespace moetune::app {

void add_isolation_options(CLI::App& cmd, IsolationOptions& options) {
  cmd.add_flag("--isolate", options.isolate,
               "Time and verify in a worker process behind a watchdog (the default on a GPU; "
               "with --replay it exercises the same isolation without one)");
  cmd.add_flag("--no-isolate", options.no_isolate,
               "Time and verify in this process: a candidate that faults or hangs then ends "
               "or stalls the whole run");
  cmd.add_option("--watchdog", options.watchdog_s,
                 "Seconds any one call may take before its worker is killed (default per call: "
                 "300 s bucket set-up and prepare, 120 s verification and block builds, "
                 "max(10 s, 50x the arm's last sample) per sample)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--test-fault", options.test_fault,
                 "TEST ONLY: SUBSTRING=trap|spin[@build],... makes GPU pipelines whose name "
                 "contains SUBSTRING fault (illegal address) or hang, to show the isolation")
      ->envname("MOETUNE_TEST_FAULT")
      ->check([](const std::string& spec) {
        try {
          (void)measure::parse_test_faults(spec);
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
        return std::string();
      });
}

std::unique_ptr<measure::RemoteSampler> isolated_sampler(const IsolationOptions& options,
                                                      std::vector<std::string> worker_args) {
  // The running binary itself, resolved now: argv[0] may be relative to a directory we left,
  // and a path (not /proc/self/exe) makes `ps` and the logs say what runs.
  std::vector<std::string> argv{std::filesystem::read_symlink("/proc/self/exe").string(),
                                "worker"};
  argv.insert(argv.end(), worker_args.begin(), worker_args.end());
  if (!options.test_fault.empty()) {
    argv.push_back("--test-fault");
    argv.push_back(options.test_fault);
  }
  measure::WatchdogOptions watchdog;
  watchdog.cap_s = options.watchdog_s;
  return std::make_unique<measure::RemoteSampler>(std::move(argv), watchdog);
}

}  // namespace moetune::app
