// `moe-tune worker` (hidden): the process `moe-tune tune` times and verifies in, so that a
// candidate that faults or hangs costs that candidate and this process, never the run
// (DESIGN.md §7; autotune/measure/remote_sampler.hpp is the other end). It serves the Sampler
// protocol of autotune/measure/sampler_server.hpp on stdin/stdout, one JSON line each; its logs
// go to stderr, which the parent passes through. Not meant to be run by hand.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fcntl.h>
#include <nlohmann/json.hpp>

#include "apps/moe-tune/commands.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/exec/unit_compiler.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/measure/gpu_sampler.hpp"
#include "autotune/measure/replay_sampler.hpp"
#include "autotune/measure/sampler_server.hpp"
#include "autotune/measure/test_fault.hpp"

namespace moetune::app {

namespace {

struct WorkerOptions {
  std::string backend;  // gpu | replay
  std::string replay;   // replay model JSON
  std::string arch = "sm_90";
  std::string cache_dir;
  std::string routing = "uniform";
  bool hot = false;
  std::uint64_t seed = 1;
  std::string test_fault;
  int device = 0;  // the GPU ordinal (tune --devices gives each worker its own)
  // Leave after answering a launch error: always for gpu (the context may be lost); for
  // replay only when asked, so tests exercise the parent's side of that path.
  bool exit_after_launch_error = false;
};

// Takes stdout for the protocol and points fd 1 at stderr, so that whatever else prints to
// stdout (spdlog's default sink, a stray fmt::print) can never corrupt an answer.
int claim_protocol_fd() {
  int const fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    throw Error("worker: cannot set up its protocol descriptor");
  }
  return fd;
}

// S: a sampler with set_build_observer (GpuSampler, ReplaySampler).
template <class S>
int serve(S& sampler, int out_fd, bool exit_after_launch_error) {
  measure::SamplerServer server(sampler, STDIN_FILENO, out_fd, {exit_after_launch_error});
  sampler.set_build_observer([&](const std::string& arm) { server.building(arm); });
  int const rc = server.run();
  if (rc != 0) {
    // After a fault the context may be lost: leave without running GPU destructors (the
    // driver reclaims everything of a process that ends).
    std::fflush(stderr);
    std::_Exit(rc);
  }
  return rc;
}

void run_worker(const WorkerOptions& opt, int& exit_code) {
  // A worker must not outlive the run it serves (a hung kernel would keep the GPU busy).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) std::_Exit(1);
  int const out_fd = claim_protocol_fd();
  if (opt.backend == "replay") {
    if (opt.replay.empty()) throw Error("worker --backend replay needs --replay MODEL.json");
    measure::ReplaySampler sampler(measure::read_replay_model(opt.replay).model);
    exit_code = serve(sampler, out_fd, opt.exit_after_launch_error);
    return;
  }
  if (opt.backend != "gpu") throw Error("worker: --backend is gpu or replay");
  auto const arch = search::parse_arch(opt.arch);
  gpu::Device device(opt.device);
  exec::UnitCompiler compiler(arch, opt.cache_dir);
  measure::GpuSamplerOptions so;
  so.hot = opt.hot;
  so.routing = moe::parse_routing_spec(opt.routing);
  so.weight_seed = opt.seed;
  if (!opt.test_fault.empty()) so.test_faults = measure::parse_test_faults(opt.test_fault);
  measure::GpuSampler sampler(device, arch, compiler, so);
  exit_code = serve(sampler, out_fd, true);
}

}  // namespace

void add_worker_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<WorkerOptions>();
  auto* cmd = app.add_subcommand("worker", "Serve timing and verification for `tune` (internal)");
  cmd->group("");  // hidden from --help: `tune` starts it
  cmd->add_option("--backend", opt->backend, "gpu or replay")->required();
  cmd->add_option("--replay", opt->replay, "Replay model (backend replay)");
  cmd->add_option("--arch", opt->arch, "Target arch (backend gpu)");
  cmd->add_option("--cache-dir", opt->cache_dir, "Code cache directory");
  cmd->add_option("--routing", opt->routing, "Timing routing");
  cmd->add_flag("--hot", opt->hot, "Do not rotate weight copies");
  cmd->add_option("--seed", opt->seed, "Seed of weights and inputs");
  cmd->add_option("--test-fault", opt->test_fault, "TEST ONLY: SUBSTRING=trap|spin[@build],...");
  cmd->add_option("--device", opt->device, "GPU ordinal (backend gpu)");
  cmd->add_flag("--exit-after-launch-error", opt->exit_after_launch_error,
                "Exit after answering a launch error (always so for gpu)");
  cmd->callback([opt, &exit_code] { run_worker(*opt, exit_code); });
}

}  // namespace moetune::app
