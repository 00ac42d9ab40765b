#include "apps/moe-tune/shape_options.hpp"

#include <charconv>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::app {

void ShapeOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--shape", dims, "Geometry H,I,E,TOPK (model_dim, padded inter_dim, experts, topk)")
      ->capture_default_str();
  cmd.add_option("--dtype", dtypes, "Data paths: a16w4, a8w4, bf16")->capture_default_str();
  cmd.add_option("--layout", layout, "Gate/up row order of w1: interleaved or separated")
      ->capture_default_str();
  cmd.add_flag("--doweight-stage1", doweight_stage1,
               "Apply the routing weight in stage one instead of stage two");
}

std::vector<moe::MoeShape> ShapeOptions::shapes_for(search::Arch arch) const {
  std::vector<std::int64_t> values;
  std::string_view rest = dims;
  while (!rest.empty()) {
    auto const comma = rest.find(',');
    auto const field = rest.substr(0, comma);
    std::int64_t v = 0;
    auto const [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size() || v <= 0) {
      throw Error(fmt::format("--shape '{}': '{}' is not a positive integer (expected H,I,E,TOPK)",
                              dims, field));
    }
    values.push_back(v);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  if (values.size() != 4) {
    throw Error(fmt::format("--shape '{}': expected 4 numbers H,I,E,TOPK, got {}", dims,
                            values.size()));
  }
  std::vector<moe::MoeShape> shapes;
  for (auto const& name : dtypes) {
    moe::MoeShape shape;
    shape.hidden = values[0];
    shape.inter = values[1];
    shape.experts = static_cast<int>(values[2]);
    shape.topk = static_cast<int>(values[3]);
    shape.dtype = moe::parse_dtype_path(name);
    shape.gate_up = moe::parse_gate_up_layout(layout);
    shape.doweight_stage1 = doweight_stage1;
    shape.fp8_flavor = arch == search::Arch::gfx942 ? moe::Fp8Flavor::fnuz : moe::Fp8Flavor::ocp;
    moe::validate(shape);
    shapes.push_back(shape);
  }
  return shapes;
}

}  // namespace moetune::app
