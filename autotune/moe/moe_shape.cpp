#include "autotune/moe/moe_shape.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::moe {

std::string_view to_string(DtypePath path) {
  switch (path) {
    case DtypePath::a16w4: return "a16w4";
    case DtypePath::a8w4: return "a8w4";
    case DtypePath::bf16: return "bf16";
  }
  return "?";
}

std::string_view to_string(GateUpLayout layout) {
  return layout == GateUpLayout::interleaved ? "interleaved" : "separated";
}

DtypePath parse_dtype_path(std::string_view text) {
  for (auto p : {DtypePath::a16w4, DtypePath::a8w4, DtypePath::bf16}) {
    if (text == to_string(p)) return p;
  }
  throw Error(fmt::format("unknown dtype path '{}': expected a16w4, a8w4 or bf16", text));
}

GateUpLayout parse_gate_up_layout(std::string_view text) {
  for (auto l : {GateUpLayout::interleaved, GateUpLayout::separated}) {
    if (text == to_string(l)) return l;
  }
  throw Error(fmt::format("unknown gate/up layout '{}': expected interleaved or separated", text));
}

std::vector<std::string> validation_errors(const MoeShape& s) {
  std::vector<std::string> errors;
  auto const need = [&](bool ok, std::string reason) {
    if (!ok) errors.push_back(std::move(reason));
  };
  need(s.tokens >= 1, fmt::format("tokens M={} must be at least 1", s.tokens));
  need(s.hidden >= 1, fmt::format("hidden H={} must be at least 1", s.hidden));
  need(s.inter >= 1, fmt::format("inter I={} must be at least 1", s.inter));
  need(s.experts >= 1, fmt::format("experts E={} must be at least 1", s.experts));
  need(s.topk >= 1, fmt::format("topk={} must be at least 1", s.topk));
  need(s.topk <= s.experts,
       fmt::format("topk={} exceeds experts E={}: a token's experts must be distinct", s.topk,
                   s.experts));
  need(s.logical_inter >= 0 && s.logical_inter <= s.inter,
       fmt::format("logical_inter={} must lie in [1, I={}] (0 means I)", s.logical_inter,
                   s.inter));
  // MX scales cover 32 consecutive K elements: H is stage one's K, I is stage two's K (and
  // the A8W4 intermediate is quantised per 32 along I). The bf16 path has no such rule, but
  // the kernels' K tiles are multiples of 32 anyway, so it is required everywhere.
  need(s.hidden % mx_block == 0,
       fmt::format("hidden H={} must be a multiple of {} (MX scale block / K tile)", s.hidden,
                   mx_block));
  need(s.inter % mx_block == 0,
       fmt::format("inter I={} must be a multiple of {} (MX scale block / K tile); pad it and "
                   "set logical_inter",
                   s.inter, mx_block));
  // Slot ids (t*topk + k) and the padding id M*topk are int32 in the kernels.
  need(s.tokens <= (std::int64_t{1} << 31) / std::max(s.topk, 1) - 1,
       fmt::format("tokens M={} times topk={} does not fit the kernels' int32 slot ids",
                   s.tokens, s.topk));
  return errors;
}

void validate(const MoeShape& shape) {
  auto const errors = validation_errors(shape);
  if (errors.empty()) return;
  std::string message = fmt::format("invalid MoE shape {}:", to_string(shape));
  for (auto const& e : errors) message += "\n  - " + e;
  throw Error(message);
}

std::string to_string(const MoeShape& s) {
  std::string logical;
  if (s.effective_logical_inter() != s.inter) {
    logical = fmt::format(" (logical {})", s.effective_logical_inter());
  }
  std::string flavour;
  if (s.dtype == DtypePath::a8w4) flavour = fmt::format(" e4m3={}", to_string(s.fp8_flavor));
  return fmt::format("M={} H={} I={}{} E={} topk={} {}{} {} doweight_stage1={}", s.tokens,
                     s.hidden, s.inter, logical, s.experts, s.topk, to_string(s.dtype), flavour,
                     to_string(s.gate_up), s.doweight_stage1 ? 1 : 0);
}

std::int64_t gate_row(const MoeShape& shape, std::int64_t j) {
  return shape.gate_up == GateUpLayout::interleaved ? 2 * j : j;
}

std::int64_t up_row(const MoeShape& shape, std::int64_t j) {
  return shape.gate_up == GateUpLayout::interleaved ? 2 * j + 1 : shape.inter + j;
}

double weight_bytes_per_element(DtypePath path) {
  return path == DtypePath::bf16 ? 2.0 : 0.5 + 1.0 / mx_block;
}

double activation_bytes_per_element(DtypePath path) {
  return path == DtypePath::a8w4 ? 1.0 + 1.0 / mx_block : 2.0;
}

double expected_experts_touched(int experts, int topk, std::int64_t tokens) {
  if (experts <= 0) return 0.0;
  double const miss = 1.0 - static_cast<double>(topk) / experts;
  return experts * (1.0 - std::pow(miss, static_cast<double>(tokens)));
}

MoeTraffic moe_traffic(const MoeShape& s, double experts_touched) {
  auto const m = static_cast<double>(s.tokens);
  auto const h = static_cast<double>(s.hidden);
  auto const i = static_cast<double>(s.inter);
  auto const slots = m * s.topk;
  MoeTraffic t;
  t.experts_touched = experts_touched;
  t.weight_bytes = experts_touched * 3.0 * i * h * weight_bytes_per_element(s.dtype);
  t.activation_bytes = m * h * activation_bytes_per_element(s.dtype);
  t.intermediate_bytes = 2.0 * slots * i * activation_bytes_per_element(s.dtype);
  t.output_bytes = m * h * 2.0;
  t.routing_bytes = slots * (4.0 + 4.0);
  return t;
}

MoeTraffic expected_moe_traffic(const MoeShape& s) {
  return moe_traffic(s, expected_experts_touched(s.experts, s.topk, s.tokens));
}

double moe_flops(const MoeShape& s) {
  return 2.0 * static_cast<double>(s.tokens) * s.topk *
         (2.0 * static_cast<double>(s.inter) * static_cast<double>(s.hidden) +
          static_cast<double>(s.hidden) * static_cast<double>(s.inter));
}

}  // namespace moetune::moe
