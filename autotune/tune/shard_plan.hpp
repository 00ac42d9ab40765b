#pragma once
// Sharding one tuning run over machines (`moe-tune tune --shard K/N`, docs/scale-out.md).
// Tuning is embarrassingly parallel over buckets: shard K of N measures only its share of the
// list's buckets, writes its own table, report and journal, and `moe-tune merge-shards`
// combines the shards into the table, report and summary one run would have written.
//
// The partition is a pure function of the plan and N, so every shard computes the same one on
// its own, with no coordinator: buckets by estimated cost, largest first (ties: list line),
// each to the shard with the least estimated work so far (ties: the lowest index). No bucket is
// in two shards and every bucket is in one.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/measure/bucket_plan.hpp"
#include "autotune/tune/tune_plan.hpp"

namespace moetune::tune {

struct ShardSpec {
  int index = 0;       // 0-based
  int count = 1;
  std::string source;  // where it came from: "--shard 2/4", "SLURM_ARRAY_TASK_ID=…", …
  // As the user writes it: 1-based "K/N".
  [[nodiscard]] std::string label() const;
};

// Reads an environment variable (tests pass a map; the tool passes getenv).
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
[[nodiscard]] EnvLookup process_environment();

// "K/N" with 1 <= K <= N, or "auto": the scheduler's variables, in this order:
//   MOETUNE_SHARD=K/N;
//   Slurm job arrays: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (with
//     SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP when set: shard = (ID - MIN) / STEP);
//   Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX (0-based) with MOETUNE_SHARD_COUNT (the
//     Job's `completions`, which Kubernetes does not put in the pod's environment).
// Throws moetune::Error naming the text or variable that is wrong.
[[nodiscard]] ShardSpec parse_shard(std::string_view text, const EnvLookup& env);

// A bucket's estimated tuning cost, in relative units: its timed pipelines times (a fixed
// per-pipeline cost + the MoE's roofline time at the bucket's M). The fixed part (35 µs of
// roofline-equivalent) stands for building, loading and checking a pipeline; with it the
// model reproduces the spread of session 7's measured bucket times on the H200 (backbone token
// 8 vs 1024: 17.5 vs 118 s; results/sm_90/2026-12-01-h200-s7/tune).
[[nodiscard]] double bucket_cost(const measure::BucketPlan& bucket);

struct ShardPartition {
  std::vector<std::vector<std::size_t>> buckets;  // per shard: indices into plan.buckets, in list order
  std::vector<double> cost;                       // per shard: the estimated cost of its buckets
};
[[nodiscard]] ShardPartition partition_buckets(const TunePlan& plan, int count);

// Keeps only `spec`'s buckets in `plan` (in list order) and returns the partition it came from.
ShardPartition restrict_to_shard(TunePlan& plan, const ShardSpec& spec);

}  // namespace moetune::tune
