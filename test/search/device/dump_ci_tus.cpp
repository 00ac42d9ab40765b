// Writes the rendered translation unit of every valid ci.json candidate (a16w4, a8w4, bf16 on
// a backbone shape) to <out>/<arch>/<name>.cu. Used by compile_check.sh.
#include <fstream>
#include <iostream>
#include "autotune/search/search_space.hpp"
#include "autotune/search/render.hpp"
using namespace moetune; using namespace moetune::search;
int main(int, char** argv) {
  auto space = load_search_space(argv[1]);
  for (auto& a : space.arches) for (auto d : {moe::DtypePath::a16w4, moe::DtypePath::a8w4, moe::DtypePath::bf16}) {
    moe::MoeShape s; s.tokens = 8; s.hidden = 5120; s.inter = 640; s.experts = 384; s.topk = 6; s.dtype = d;
    s.fp8_flavor = a.arch == Arch::gfx942 ? moe::Fp8Flavor::fnuz : moe::Fp8Flavor::ocp;
    for (auto& c : enumerate(space, a.arch, s)) {
      if (c.pruned_reason) continue;
      auto src = render(c.config, a.arch);
      std::string dir = std::string(argv[2]) + "/" + std::string(to_string(a.arch));
      std::ofstream(dir + "/" + src.unit_name + ".cu") << src.source;
    }
  }
}
