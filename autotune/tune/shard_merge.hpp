#pragma once
// Joining the shards of one tuning run (`moe-tune merge-shards`, docs/scale-out.md). Each
// shard (`tune --shard K/N`) journals its decided buckets under an identity that is the whole
// run's plus two fields, the shard and the list lines it owns. Merging checks that the shards
// belong to one run (identities equal but for those fields, one N, no shard twice, no bucket
// decided twice, every shard's buckets decided) and writes what the unsharded run would have:
// the tuned table (qualified rows, in list order), report.json, summary.md, and a journal
// under the unsharded identity, so `tune --resume` on the whole list takes every decided
// bucket from it.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace moetune::tune {

// The journal identity fields a shard adds (cmd_tune's journal settings).
inline constexpr std::string_view kShardField = "shard";
inline constexpr std::string_view kShardLinesField = "shard_lines";

struct MergeShardsOptions {
  std::vector<std::filesystem::path> shard_report_dirs;  // each holds journal.jsonl (+ report.json, summary.md)
  std::filesystem::path output;                          // tuned table to create (must not exist)
  std::filesystem::path report_dir;                      // report.json, summary.md, journal.jsonl
  bool partial = false;  // write what is decided even if a shard has not finished (said in the summary)
};

struct MergeShardsResult {
  std::size_t shards = 0;     // of N
  std::size_t count = 0;      // N
  std::size_t buckets = 0;    // decided buckets merged
  std::size_t qualified = 0;  // rows written
  std::vector<std::string> missing;  // "shard 3/4 (dir): line(s) 7, 9 not decided; …", "shard 4/4: not given"
  bool written = false;              // false: incomplete without `partial`
};

// Throws moetune::Error naming the shard directory and the field or line at fault. With
// buckets missing (result.missing) and without `partial`, nothing is written.
MergeShardsResult merge_shards(const MergeShardsOptions& options);

}  // namespace moetune::tune
