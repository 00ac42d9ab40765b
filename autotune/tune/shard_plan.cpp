#include "autotune/tune/shard_plan.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/tune/candidate_pairs.hpp"

namespace moetune::tune {
namespace {

std::optional<long long> to_integer(std::string_view text) {
  long long value = 0;
  auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "K/N" (1-based K) -> the spec; `what` names the text in errors.
ShardSpec parse_fraction(std::string_view text, const std::string& what) {
  auto const slash = text.find('/');
  auto const k = slash == text.npos ? std::nullopt : to_integer(text.substr(0, slash));
  auto const n = slash == text.npos ? std::nullopt : to_integer(text.substr(slash + 1));
  if (!k || !n) throw Error(fmt::format("{}: '{}' is not K/N (shard K of N, e.g. 2/4)", what, text));
  if (*n < 1 || *n > 4096) throw Error(fmt::format("{}: N = {} is outside 1..4096", what, *n));
  if (*k < 1 || *k > *n) throw Error(fmt::format("{}: K = {} is outside 1..{} (K counts from 1)", what, *k, *n));
  return ShardSpec{static_cast<int>(*k - 1), static_cast<int>(*n), what};
}

long long required_integer(const EnvLookup& env, const char* name, const std::string& why) {
  auto const value = env(name);
  if (!value) throw Error(fmt::format("--shard auto: {} is not set ({})", name, why));
  auto const number = to_integer(*value);
  if (!number) throw Error(fmt::format("--shard auto: {}='{}' is not an integer", name, *value));
  return *number;
}

ShardSpec from_indexed(long long index, long long count, const std::string& source) {
  if (count < 1 || count > 4096)
    throw Error(fmt::format("--shard auto: {}: the shard count {} is outside 1..4096", source, count));
  if (index < 0 || index >= count)
    throw Error(fmt::format("--shard auto: {}: shard index {} is outside 0..{}", source, index, count - 1));
  return ShardSpec{static_cast<int>(index), static_cast<int>(count), source};
}

}  // namespace

std::string ShardSpec::label() const { return fmt::format("{}/{}", index + 1, count); }

EnvLookup process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    char const* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

ShardSpec parse_shard(std::string_view text, const EnvLookup& env) {
  if (text != "auto") return parse_fraction(text, fmt::format("--shard {}", text));
  if (auto const explicit_shard = env("MOETUNE_SHARD"))
    return parse_fraction(*explicit_shard, fmt::format("MOETUNE_SHARD={}", *explicit_shard));
  if (env("SLURM_ARRAY_TASK_ID")) {
    auto const id = required_integer(env, "SLURM_ARRAY_TASK_ID", "the Slurm array task");
    auto const count = required_integer(env, "SLURM_ARRAY_TASK_COUNT", "a Slurm job array sets it");
    auto const min = env("SLURM_ARRAY_TASK_MIN") ? required_integer(env, "SLURM_ARRAY_TASK_MIN", "") : 0;
    auto const step = env("SLURM_ARRAY_TASK_STEP") ? required_integer(env, "SLURM_ARRAY_TASK_STEP", "") : 1;
    auto const source = fmt::format("SLURM_ARRAY_TASK_ID={} (MIN {}, STEP {}, COUNT {})", id, min, step, count);
    if (step < 1 || (id - min) % step != 0)
      throw Error(fmt::format("--shard auto: {}: the task id is not MIN + a multiple of STEP", source));
    return from_indexed((id - min) / step, count, source);
  }
  if (env("JOB_COMPLETION_INDEX")) {
    auto const index = required_integer(env, "JOB_COMPLETION_INDEX", "a Kubernetes Indexed Job");
    auto const count = required_integer(
        env, "MOETUNE_SHARD_COUNT",
        "Kubernetes does not pass the Job's completions to the pod: set it to that number");
    return from_indexed(index, count, fmt::format("JOB_COMPLETION_INDEX={} (of MOETUNE_SHARD_COUNT={})", index, count));
  }
  throw Error(
      "--shard auto: no scheduler variables: set MOETUNE_SHARD=K/N, or run as a Slurm array task "
      "(SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job "
      "(JOB_COMPLETION_INDEX with MOETUNE_SHARD_COUNT)");
}

double bucket_cost(const measure::BucketPlan& bucket) {
  // The roofline at the bucket's M: H200-like ceilings; only the ratios between buckets matter.
  constexpr double bytes_per_us = 4.2e6;   // 4.2 TB/s
  constexpr double flops_per_us = 7.9e8;   // 790 TFLOP/s
  constexpr double pipeline_fixed_us = 35;
  auto shape = bucket.shape;
  shape.tokens = std::max<std::int64_t>(1, bucket.M);
  double const roofline_us =
      std::max(moe::expected_moe_traffic(shape).total() / bytes_per_us, moe::moe_flops(shape) / flops_per_us);
  double const pipelines = 1.0 + static_cast<double>(make_candidate_pairs(bucket).pairs.size());
  return pipelines * (pipeline_fixed_us + roofline_us);
}

ShardPartition partition_buckets(const TunePlan& plan, int count) {
  if (count < 1) throw Error(fmt::format("partition_buckets: {} shards", count));
  std::vector<double> cost(plan.buckets.size());
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) cost[i] = bucket_cost(plan.buckets[i]);
  std::vector<std::size_t> order(plan.buckets.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Largest first; equal costs in list order, so the partition never depends on sort details.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  ShardPartition out;
  out.buckets.resize(static_cast<std::size_t>(count));
  out.cost.assign(static_cast<std::size_t>(count), 0.0);
  for (auto const i : order) {
    auto const least = static_cast<std::size_t>(std::min_element(out.cost.begin(), out.cost.end()) - out.cost.begin());
    out.buckets[least].push_back(i);
    out.cost[least] += cost[i];
  }
  for (auto& b : out.buckets) std::sort(b.begin(), b.end());
  return out;
}

ShardPartition restrict_to_shard(TunePlan& plan, const ShardSpec& spec) {
  auto partition = partition_buckets(plan, spec.count);
  std::vector<measure::BucketPlan> mine;
  for (auto const i : partition.buckets.at(static_cast<std::size_t>(spec.index))) mine.push_back(plan.buckets[i]);
  plan.buckets = std::move(mine);
  return partition;
}

}  // namespace moetune::tune
