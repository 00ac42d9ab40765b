// Catch2 main shared by every test executable.
//
// GPU tests carry the [gpu] tag. When the tests a run selects include a [gpu] test and this
// machine has no usable GPU, the run prints why and exits 77, which CTest reports as
// "Skipped" — a GPU test never passes silently where it did not run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "autotune/gpu/availability.hpp"

namespace {

constexpr int skip_exit_code = 77;

bool selection_needs_gpu(Catch::Session& session) {
  auto const& config = session.config();
  auto const& all = Catch::getAllTestCasesSorted(config);
  for (auto const& test_case : Catch::filterTests(all, config.testSpec(), config)) {
    for (auto const& tag : test_case.getTestCaseInfo().tags) {
      if (tag == "gpu") return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  if (session.configData().listTests || session.configData().listTestNamesOnly ||
      session.configData().listTags) {
    return session.run();
  }
  if (selection_needs_gpu(session)) {
    auto const gpu = moetune::gpu::probe_gpu();
    if (!gpu.available) {
      std::printf("SKIPPED: [gpu] test(s) selected but no usable GPU: %s\n", gpu.reason.c_str());
      return skip_exit_code;
    }
  }
  return session.run();
}
