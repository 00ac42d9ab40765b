// `moe-tune merge --into TABLE.csv [--siblings DIR] NEW.csv [--dry-run]`: inserts or replaces
// the rows of NEW.csv in an existing AITER tuned table, keeping every other line byte for
// byte, refusing keys that another tuned table in DIR already defines.
// Exit 0 merged (or nothing to change), 1 refused (collision, validation error), 2 unreadable
// input or a failed write (thrown to main; the target is then untouched).
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "apps/moe-tune/commands.hpp"
#include "autotune/io/table_merge.hpp"

namespace moetune::app {

namespace {
struct MergeOptions {
  std::string into;
  std::string incoming;
  std::string siblings;
  bool dry_run = false;
};

void run_merge(const MergeOptions& options, int& exit_code) {
  std::optional<std::filesystem::path> siblings;
  if (!options.siblings.empty()) siblings = options.siblings;
  auto const plan = io::plan_merge(options.into, options.incoming, siblings);

  // Findings go to stderr: stdout carries the diff, which a user may pipe into a file.
  for (auto const& d : plan.findings) fmt::print(stderr, "{}\n", d.format());
  for (auto const& skipped : plan.siblings_skipped) {
    fmt::print(stderr, "merge: note: {} is not an fMoE tuned table; not compared\n",
               skipped.string());
  }
  if (!plan.ok()) {
    fmt::print(stderr, "merge: refused: {} error(s); {} not changed\n", plan.error_count(),
               plan.target.string());
    exit_code = 1;
    return;
  }

  using Kind = io::MergeChange::Kind;
  auto const summary =
      fmt::format("{} row(s) replaced, {} appended, {} already identical; {} sibling table(s) "
                  "checked",
                  plan.count(Kind::replaced), plan.count(Kind::appended),
                  plan.count(Kind::unchanged), plan.siblings_checked.size());
  if (options.dry_run) {
    auto const label = plan.target.string();
    fmt::print("{}", io::positional_diff(plan.before, plan.after, label, label + " (merged)"));
    fmt::print("merge: dry run: {}; {} not written\n", summary, label);
    exit_code = 0;
    return;
  }
  io::apply_merge(plan);
  fmt::print("merge: {}: {}\n", plan.target.string(), summary);
  exit_code = 0;
}
}  // namespace

void add_merge_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<MergeOptions>();
  auto* cmd = app.add_subcommand(
      "merge",
      "Insert or replace the rows of a tuned CSV in an existing AITER tuned table, keeping its "
      "column order and every other line byte for byte; refuses keys another tuned table in "
      "--siblings defines. Exit 0 merged, 1 refused, 2 unreadable input");
  cmd->add_option("--into", options->into, "The AITER tuned table to merge into (must exist)")
      ->required();
  cmd->add_option("--siblings", options->siblings,
                  "Directory of the tuned tables AITER loads together with the target: a key "
                  "any of them defines is refused");
  cmd->add_option("new", options->incoming, "Tuned CSV whose rows are merged")->required();
  cmd->add_flag("--dry-run", options->dry_run,
                "Print the change as a diff (line numbers of removed and added lines) and write "
                "nothing");
  cmd->callback([options, &exit_code] { run_merge(*options, exit_code); });
}

}  // namespace moetune::app
