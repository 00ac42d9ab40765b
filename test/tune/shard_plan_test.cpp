// tune --shard's partition (autotune/tune/shard_plan.hpp): the K/N and scheduler forms, and a
// deterministic, complete, disjoint, cost-balanced partition. The CLI test
// (test/apps/cli_tune_shard_test.sh) runs shards end to end and merges them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "autotune/core/error.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/search/search_space.hpp"
#include "autotune/tune/shard_plan.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;

namespace {

tune::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto const it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The DeepSeek-V4.1-Flash TP4 A16W4 list (16 buckets, tokens 8..1024 of two shapes).
tune::TunePlan dsv41_plan() {
  auto const list = io::read_fmoe_table(test::source_dir() / "shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv");
  auto const space = search::load_search_space(test::source_dir() / "search_spaces/sm_90.json");
  return tune::make_tune_plan(list, space, search::Arch::sm_90);
}

}  // namespace

TEST_CASE("shard K/N (tune --shard) and its scheduler forms", "[tune][shard]") {
  using Catch::Contains;
  auto const none = env_of({});
  auto const s = tune::parse_shard("2/4", none);
  CHECK(s.index == 1);
  CHECK(s.count == 4);
  CHECK(s.label() == "2/4");
  for (auto const* bad : {"0/4", "5/4", "a/4", "4", "2/0", "2/4x", ""})
    CHECK_THROWS_WITH(tune::parse_shard(bad, none), Contains("--shard"));

  CHECK(tune::parse_shard("auto", env_of({{"MOETUNE_SHARD", "3/3"}, {"SLURM_ARRAY_TASK_ID", "0"}})).label() == "3/3");
  // Slurm: index = (ID - MIN) / STEP of COUNT tasks.
  CHECK(tune::parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}})).label() == "1/4");
  CHECK(tune::parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "14"}, {"SLURM_ARRAY_TASK_MIN", "10"},
                                          {"SLURM_ARRAY_TASK_STEP", "2"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}))
            .label() == "3/3");
  CHECK_THROWS_WITH(tune::parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "3"}})), Contains("SLURM_ARRAY_TASK_COUNT"));
  CHECK_THROWS_WITH(tune::parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "4"}})),
                    Contains("outside 0..3"));
  // Kubernetes Indexed Jobs: the 0-based index, and the count the Job's spec must pass on.
  CHECK(tune::parse_shard("auto", env_of({{"JOB_COMPLETION_INDEX", "0"}, {"MOETUNE_SHARD_COUNT", "2"}})).label() == "1/2");
  CHECK_THROWS_WITH(tune::parse_shard("auto", env_of({{"JOB_COMPLETION_INDEX", "0"}})), Contains("MOETUNE_SHARD_COUNT"));
  CHECK_THROWS_WITH(tune::parse_shard("auto", none), Contains("MOETUNE_SHARD=K/N") && Contains("JOB_COMPLETION_INDEX"));
}

TEST_CASE("shards partition a list's buckets: each once, the same on every machine, balanced", "[tune][shard]") {
  auto const plan = dsv41_plan();
  REQUIRE(plan.buckets.size() == 16);
  double total = 0, largest = 0;
  for (auto const& b : plan.buckets) {
    double const c = tune::bucket_cost(b);
    CHECK(c > 0);
    total += c;
    largest = std::max(largest, c);
  }
  // More tokens cost more to tune (the model follows session 7's measured bucket times).
  CHECK(tune::bucket_cost(plan.buckets[7]) > 3 * tune::bucket_cost(plan.buckets[0]));
  for (int n : {1, 2, 3, 4, 8, 16, 20}) {
    CAPTURE(n);
    auto const p = tune::partition_buckets(plan, n);
    REQUIRE(p.buckets.size() == static_cast<std::size_t>(n));
    std::multiset<std::size_t> all;
    for (auto const& shard : p.buckets) {
      CHECK(std::is_sorted(shard.begin(), shard.end()));
      all.insert(shard.begin(), shard.end());
    }
    CHECK(all.size() == plan.buckets.size());
    CHECK(std::set<std::size_t>(all.begin(), all.end()).size() == plan.buckets.size());
    // Greedy largest-first: no shard exceeds the ideal share by more than the largest bucket.
    for (double c : p.cost) CHECK(c <= total / n + largest + 1e-9);
    CHECK(tune::partition_buckets(plan, n).buckets == p.buckets);  // deterministic
  }
  auto plan2 = plan;
  auto const p = tune::restrict_to_shard(plan2, tune::ShardSpec{1, 3, "test"});
  REQUIRE(plan2.buckets.size() == p.buckets[1].size());
  for (std::size_t i = 0; i < plan2.buckets.size(); ++i) CHECK(plan2.buckets[i].line == plan.buckets[p.buckets[1][i]].line);
}
