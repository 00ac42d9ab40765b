// `moe-tune merge-shards SHARD_REPORT_DIR... -o TABLE --report DIR`: joins the shards of one
// tuning run (`tune --shard K/N`) into the table, report.json, summary.md and journal the
// unsharded run would have written (autotune/tune/shard_merge.hpp, docs/scale-out.md).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/moe-tune/commands.hpp"
#include "apps/moe-tune/replay_outputs.hpp"
#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/tune/shard_merge.hpp"

namespace moetune::app {
namespace {

struct MergeShardsCli {
  std::vector<std::string> shards;
  std::string output;
  std::string report_dir;
  bool partial = false;
};

// A replayed run's merge must not land where measurements are looked for, as for `tune`.
bool replayed(const std::vector<std::string>& shards) {
  for (auto const& dir : shards) {
    auto const report = std::filesystem::path(dir) / "report.json";
    if (std::filesystem::exists(report) && read_file(report).find("\"sampler\": \"replay\"") != std::string::npos)
      return true;
  }
  return false;
}

void run_merge_shards(const MergeShardsCli& cli, int& exit_code) {
  if (replayed(cli.shards))
    refuse_outputs_inside({{"-o", cli.output}, {"--report", cli.report_dir}}, measurement_directories());
  tune::MergeShardsOptions options;
  for (auto const& s : cli.shards) options.shard_report_dirs.emplace_back(s);
  options.output = cli.output;
  options.report_dir = cli.report_dir;
  options.partial = cli.partial;
  tune::MergeShardsResult r;
  try {
    r = tune::merge_shards(options);
  } catch (const Error& e) {
    // Every refusal is about the shards given or the outputs asked for: a usage error (exit 2).
    throw CLI::ValidationError("merge-shards", e.what());
  }
  if (!r.written) {
    fmt::print("merge-shards: the run is not complete; nothing was written (--partial writes what "
               "is decided):\n");
    for (auto const& m : r.missing) fmt::print("  {}\n", m);
    exit_code = 1;
    return;
  }
  fmt::print("merge-shards: {} of {} shards, {} buckets decided, {} qualified; {} rows written to "
             "{}; report {}\n",
             r.shards, r.count, r.buckets, r.qualified, r.qualified,
             r.qualified > 0 ? cli.output : "(nothing)", cli.report_dir);
  for (auto const& m : r.missing) fmt::print("  not complete: {}\n", m);
  exit_code = r.missing.empty() ? 0 : 1;
}

}  // namespace

void add_merge_shards_command(CLI::App& app, int& exit_code) {
  auto cli = std::make_shared<MergeShardsCli>();
  auto* cmd = app.add_subcommand(
      "merge-shards",
      "Join the shards of one tuning run (tune --shard K/N) into the tuned table, report.json, "
      "summary.md and journal one run would have written; refuses shards of different runs, a "
      "shard given twice and a bucket decided twice. Exit 0 merged, 1 a shard is not complete "
      "(with --partial: merged anyway), 2 bad input");
  cmd->add_option("shards", cli->shards, "Report directories of the shards (each holds journal.jsonl)")
      ->required();
  cmd->add_option("-o,--output", cli->output, "Tuned CSV to create (must not exist)")->required();
  cmd->add_option("--report", cli->report_dir, "Directory for the merged report.json, summary.md and journal")
      ->required();
  cmd->add_flag("--partial", cli->partial,
                "Write what the shards decided even when one has not finished (the summary says which)");
  cmd->callback([cli, &exit_code] { run_merge_shards(*cli, exit_code); });
}

}  // namespace moetune::app
