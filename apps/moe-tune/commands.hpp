#pragma once
// One function per subcommand, each defined in its own file (cmd_<name>.cpp): it adds the
// subcommand and its options to the app and installs the callback that runs it. A callback
// reports its exit status through `exit_code`; errors are thrown and caught once, in main.
#include <string>

#include <CLI/CLI.hpp>

namespace moetune::app {

// The command line this process was started with, shell-quoted: the "exact command that
// reproduces the run" of every report.
[[nodiscard]] const std::string& command_line();
void set_command_line(int argc, char** argv);

void add_validate_command(CLI::App& app, int& exit_code);
void add_merge_command(CLI::App& app, int& exit_code);
void add_merge_shards_command(CLI::App& app, int& exit_code);
void add_compile_command(CLI::App& app, int& exit_code);
void add_device_command(CLI::App& app, int& exit_code);
void add_tune_command(CLI::App& app, int& exit_code);
void add_worker_command(CLI::App& app, int& exit_code);  // hidden: `tune`'s worker
void add_requalify_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_verify_command(CLI::App& app, int& exit_code);
void add_calibrate_command(CLI::App& app, int& exit_code);

}  // namespace moetune::app
