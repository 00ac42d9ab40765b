#pragma once
// From an AITER table key to the MoE geometry our kernels run. Not every AITER configuration
// is one of ours (per-token FP8, int8, 1x128 block scales, GELU ...): those rows get a reason.
#include <cstdint>
#include <string>
#include <variant>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"

namespace moetune::tune {

// The shape for M tokens of this key on this arch (A8W4 uses e4m3fnuz on gfx942), or a
// sentence saying why moe-tune has no kernel for it. Gate/up rows are taken as interleaved,
// AITER's layout for these fMoE tables.
[[nodiscard]] std::variant<moe::MoeShape, std::string> shape_from_key(const io::FmoeKey& key,
                                                                      std::int64_t M,
                                                                      search::Arch arch);

}  // namespace moetune::tune
