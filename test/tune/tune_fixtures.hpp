#pragma once
// Buckets and replay models for the protocol tests: a DeepSeek-V4.1-Flash backbone bucket on
// sm_90 whose candidates are stage-one variants of the baseline (same block_m, so each is
// paired with the baseline's own stage two) plus one pruned candidate.
#include <string>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

#include "autotune/search/default_config.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/candidate_pairs.hpp"
#include "autotune/measure/replay_sampler.hpp"
#include "autotune/tune/shape_from_key.hpp"

namespace moetune::test {

inline measure::BucketPlan make_bucket(std::int64_t token, std::int64_t M, int variants) {
  measure::BucketPlan b;
  b.key.token = token;
  b.key.model_dim = 5120;
  b.key.inter_dim = 640;
  b.key.expert = 384;
  b.key.topk = 6;
  b.key.act_type = io::ActivationType::silu;
  b.key.dtype = io::TorchDtype::bf16;
  b.key.q_dtype_a = io::TorchDtype::bf16;
  b.key.q_dtype_w = io::TorchDtype::fp4x2_e2m1fn;
  b.key.q_type = io::QuantType::per_1x32;
  b.key.use_g1u1 = true;
  b.key.doweight_stage1 = false;
  b.line = 2;
  b.M = M;
  b.shape = std::get<moe::MoeShape>(tune::shape_from_key(b.key, M, search::Arch::sm_90));
  b.baseline = search::default_config(b.shape, search::Arch::sm_90, M);
  // Variants differ from the baseline's stage one in block_k and kpack, with the shortest
  // ring its main loop takes (2; wgmma: 3) and no occupancy hint (so their LDS fits).
  int const block_ks[] = {256, 512, 256, 512};
  int const kpacks[] = {1, 1, 2, 2};
  for (int i = 0; i < variants; ++i) {
    auto c = b.baseline.stage1;
    c.block_k = block_ks[i % 4];
    c.kpack = kpacks[i % 4];
    c.stages = c.wgmma ? 3 : 2;
    c.waves = 0;
    b.candidates.push_back({c, std::nullopt});
  }
  auto pruned = b.baseline.stage1;
  pruned.block_k = 96;
  b.candidates.push_back({pruned, std::string("block_k must be a multiple of 32 and >= 128")});
  return b;
}

// The pipeline name of the plan's i-th candidate (stage one variant + baseline stage two).
inline std::string pipeline_name(const measure::BucketPlan& b, std::size_t i) {
  return measure::TunePair{b.candidates.at(i).config, b.baseline.stage2}.name();
}
inline std::string baseline_name(const measure::BucketPlan& b) {
  return tune::baseline_pair(b).name();
}

// Default: every pipeline 100 µs with 0.2 % noise and 0.1 % placement per arm and block.
inline measure::ReplayModel quiet_model(std::uint64_t seed = 7) {
  measure::ReplayModel m;
  m.seed = seed;
  m.default_mean_us = 100;
  m.noise = 0.002;
  m.block_sd = 0.001;
  return m;
}

inline std::size_t count_prefix(const std::vector<std::string>& log, const std::string& prefix) {
  std::size_t n = 0;
  for (auto const& l : log) n += l.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// The record of the pipeline called `name` in a bucket's result; fails the test if absent.
inline const tune::PairRecord& record(const tune::BucketResult& r, const std::string& name) {
  for (auto const& p : r.pairs) {
    if (p.pair.name() == name) return p;
  }
  FAIL("no pipeline " << name);
  throw;
}

}  // namespace moetune::test
