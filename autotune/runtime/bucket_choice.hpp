#pragma once
// Which kernel pair serves each power-of-two bucket of a layer: the tuned row AITER's lookup
// finds, or the default configuration (search/default_config.hpp) when there is none or the
// row cannot be used (a kernel name that does not parse, does not fit the layer or the device,
// or does not compile). Decided once, at prepare time; forward only indexes the result.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/runtime/layer_key.hpp"
#include "autotune/runtime/tuned_tables.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::runtime {

enum class ChoiceSource {
  tuned_row,             // the row's kernels
  default_no_row,        // no row for this bucket
  default_row_rejected,  // a row exists but cannot run here: see BucketChoice::rejection
};
[[nodiscard]] std::string_view to_string(ChoiceSource source);

struct BucketChoice {
  std::int64_t tokens = 0;  // the bucket: the row's `token`, M rounded up to a power of two
  search::KernelConfig stage1, stage2;
  ChoiceSource source = ChoiceSource::default_no_row;
  std::string row_origin;  // "file.csv:LINE" of the row used or rejected
  std::string rejection;   // why the row was not used
};

// Compiles a configuration for the device (or finds it in the cache): nullopt when it
// compiled, else the reason it did not.
using CompileCheck = std::function<std::optional<std::string>(const search::KernelConfig&)>;

// The reason a row's kernel pair cannot serve the layer on `arch` (nullopt: it can), with
// the parsed pair in `out`. Compilation is not tried here.
[[nodiscard]] std::optional<std::string> row_problem(const io::TunedResult& tuned,
                                                     const moe::MoeShape& shape, search::Arch arch,
                                                     search::KernelConfig& stage1,
                                                     search::KernelConfig& stage2);

// One choice per bucket_list(layer.max_tokens). Throws RuntimeError(compile) when a default
// configuration itself does not compile (the layer cannot run at all).
[[nodiscard]] std::vector<BucketChoice> choose_buckets(const LayerSpec& layer, search::Arch arch,
                                                       const DeviceIdentity& device,
                                                       const TunedTables& tables,
                                                       const CompileCheck& compile);

}  // namespace moetune::runtime
