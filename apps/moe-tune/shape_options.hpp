#pragma once
// The shape options shared by commands that need one MoE geometry without a CSV
// (compile, bench): --shape H,I,E,TOPK --dtype LIST --layout --doweight-stage1.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"

namespace moetune::app {

struct ShapeOptions {
  std::string dims = "5120,640,384,6";  // DeepSeek-V4.1-Flash TP4 backbone
  std::vector<std::string> dtypes{"a16w4", "a8w4", "bf16"};
  std::string layout = "interleaved";
  bool doweight_stage1 = false;

  void add_to(CLI::App& cmd);
  // One shape per data path, for this arch (A8W4 uses e4m3fnuz on gfx942). Throws
  // moetune::Error on malformed dims or unknown names.
  [[nodiscard]] std::vector<moe::MoeShape> shapes_for(search::Arch arch) const;
};

}  // namespace moetune::app
