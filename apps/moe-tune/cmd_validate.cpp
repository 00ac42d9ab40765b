// `moe-tune validate FILE...`: schema, value and key checks for AITER fMoE tables.
// Exit 0 clean (warnings allowed), 1 findings, 2 unreadable input.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/moe-tune/commands.hpp"
#include "autotune/io/validate.hpp"

namespace moetune::app {

namespace {
struct ValidateOptions {
  std::vector<std::string> files;
};
}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Check AITER fMoE tables (tuned or untuned): schema, values, duplicate keys within and "
      "across the files given, non-power-of-two tokens. Exit 0 clean, 1 findings, 2 unreadable");
  cmd->add_option("files", options->files, "CSV tables to check (checked together)")
      ->required();
  cmd->callback([options, &exit_code] {
    std::vector<std::filesystem::path> paths(options->files.begin(), options->files.end());
    auto const report = io::validate_files(paths);
    io::print_report(report, stdout);
    exit_code = report.exit_code();
  });
}

}  // namespace moetune::app
