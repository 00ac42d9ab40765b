#include "autotune/io/fmoe_row.hpp"

#include <fmt/format.h>

namespace moetune::io {

std::string FmoeKey::describe() const {
  std::string out;
  if (!gfx.empty()) out += fmt::format("gfx={} ", gfx);
  if (cu_num) out += fmt::format("cu_num={} ", *cu_num);
  out += fmt::format(
      "token={} model_dim={} inter_dim={} expert={} topk={} {} dtype={} q_dtype_a={} "
      "q_dtype_w={} {} use_g1u1={} doweight_stage1={}",
      token, model_dim, inter_dim, expert, topk, to_string(act_type), to_string(dtype),
      to_string(q_dtype_a), to_string(q_dtype_w), to_string(q_type), use_g1u1 ? 1 : 0,
      doweight_stage1 ? 1 : 0);
  if (fhmoe) {
    out += fmt::format(" shared_expert_id={} hidden_pad={} intermediate_pad={} {}",
                       fhmoe->shared_expert_id, fhmoe->hidden_pad, fhmoe->intermediate_pad,
                       to_string(fhmoe->gate_mode));
  }
  if (gate_mode) out += fmt::format(" {}", to_string(*gate_mode));
  out += fmt::format(" _tag='{}'", tag);
  return out;
}

std::string_view gfx_from_cu_num(std::int64_t cu_num) {
  switch (cu_num) {
    case 256:
      return "gfx950";
    case 80:
    case 304:
      return "gfx942";
    default:
      return "";
  }
}

}  // namespace moetune::io
