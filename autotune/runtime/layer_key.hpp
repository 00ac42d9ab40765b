#pragma once
// AITER's lookup rules for one MoE layer: which key a tuned row must have to serve M tokens
// on this device. M is rounded up to the next power of two (the row's `token`); every other
// key column must equal the layer's: gfx and cu_num of the running device, the shape, the data
// path spelled as AITER spells it, and _tag.
#include <cstdint>
#include <string>
#include <vector>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"

namespace moetune::runtime {

// What rows are matched against: the running device's arch string ("sm_90", "gfx942") and
// its SM/CU count.
struct DeviceIdentity {
  std::string arch;
  int compute_units = 0;
};

// One layer as the runtime prepares it: the shape (tokens unused), the most tokens a forward
// may bring, and the _tag its rows carry.
struct LayerSpec {
  moe::MoeShape shape;
  std::int64_t max_tokens = 0;
  std::string tag;
};

// The smallest power of two >= tokens (1 for tokens <= 1): the `token` of the row AITER uses.
[[nodiscard]] std::int64_t bucket_tokens(std::int64_t tokens);
// Index of that bucket in bucket_list(): 0 for tokens <= 1, else ceil(log2(tokens)).
[[nodiscard]] int bucket_index(std::int64_t tokens);
// 1, 2, 4, ... up to bucket_tokens(max_tokens): every row a layer can use.
[[nodiscard]] std::vector<std::int64_t> bucket_list(std::int64_t max_tokens);

// The key of the row for `token` tokens of this layer on this device.
[[nodiscard]] io::FmoeKey layer_key(const LayerSpec& layer, const DeviceIdentity& device,
                                    std::int64_t token);

// Whether a row's key serves the layer key `wanted` (any token): equal in every column, where
// a row read from a table without a gfx column whose cu_num AITER cannot map to an arch
// (io::gfx_from_cu_num) takes the running device's arch, as AITER does.
[[nodiscard]] bool serves_layer(const io::FmoeKey& row, const io::FmoeKey& wanted);

}  // namespace moetune::runtime
