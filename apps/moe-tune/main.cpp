// moe-tune: offline autotuner for two-stage fused Mixture-of-Experts GPU kernels.
//
// Exit codes: 0 success; 1 the command ran and found problems (validation findings, failed
// compiles, nothing qualified where that is an error); 2 bad input or usage (the message names
// the file, line and column); 3 a GPU, compiler or system failure; `tune` only: 4 a bucket's
// baseline failed, 5 a bucket's set-up failed (autotune/tune/protocol_run.hpp).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "apps/moe-tune/commands.hpp"
#include "autotune/core/error.hpp"

int main(int argc, char** argv) {
  // Line-buffered even into a pipe or a file: a long run that is stopped keeps its progress.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  moetune::app::set_command_line(argc, argv);
  CLI::App app{
      "moe-tune: tunes two-stage fused MoE kernels (A16W4, A8W4, bf16) per shape, proves every "
      "finalist correct, and writes only rows that pass a predeclared paired-timing gate into "
      "AITER's tuned fMoE CSV."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "moe-tune 0.1.0");
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "More detail (-vv for debug traces)");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors");
  app.parse_complete_callback([&] {
    auto level = spdlog::level::info;
    if (quiet) level = spdlog::level::warn;
    if (verbosity == 1) level = spdlog::level::debug;
    if (verbosity >= 2) level = spdlog::level::trace;
    spdlog::set_level(level);
    spdlog::set_pattern("[%H:%M:%S] %^%l%$: %v");
  });

  int exit_code = 0;
  moetune::app::add_validate_command(app, exit_code);
  moetune::app::add_merge_command(app, exit_code);
  moetune::app::add_merge_shards_command(app, exit_code);
  moetune::app::add_compile_command(app, exit_code);
  moetune::app::add_device_command(app, exit_code);
  moetune::app::add_tune_command(app, exit_code);
  moetune::app::add_worker_command(app, exit_code);
  moetune::app::add_requalify_command(app, exit_code);
  moetune::app::add_bench_command(app, exit_code);
  moetune::app::add_verify_command(app, exit_code);
  moetune::app::add_calibrate_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const moetune::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const moetune::FileError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const moetune::Error& e) {
    std::fprintf(stderr, "moe-tune: error: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moe-tune: internal error: %s\n", e.what());
    return 3;
  }
  return exit_code;
}
