#pragma once
// One bucket as the measurement back end sees it: the table key, the M it is timed at, the
// shape our kernels run, the default (baseline) configuration and the candidates. The plan of
// a whole run (autotune/tune/tune_plan.hpp) is a list of these; a Sampler is set up with one.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/search_space.hpp"

namespace moetune::measure {

// Unit name (KernelConfig::name()) -> digest of its machine code (jit/machine_code_digest.hpp).
using CodeDigests = std::map<std::string, std::string>;

struct BucketPlan {
  io::FmoeKey key;
  std::int64_t line = 0;  // in the untuned list
  std::int64_t M = 0;     // actual_m when the list gives one, else the bucket's token count
  moe::MoeShape shape;
  search::DefaultConfigs baseline;
  std::vector<search::Candidate> candidates;  // stage one first, then stage two
  // Set: time exactly this pipeline against the baseline and nothing else (`moe-tune
  // requalify` re-checks a tuned row's pair through the same protocol). The candidates are
  // then the pair's two configurations; make_candidate_pairs pairs them with each other,
  // never with a partner of its own choosing.
  struct FixedPair {
    search::KernelConfig stage1;
    search::KernelConfig stage2;
  };
  std::optional<FixedPair> fixed_pair;
  // Machine-code digests of the compiled units (code_digests.hpp), shared by every bucket of
  // a plan; null when no code exists (a replayed run): candidates are then told apart by name
  // only, and code twins are timed as if they differed.
  std::shared_ptr<const CodeDigests> code_digests;
};

}  // namespace moetune::measure
