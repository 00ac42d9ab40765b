#include "autotune/search/search_space.hpp"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/search/validity.hpp"

namespace moetune::search {
namespace {

using nlohmann::json;

struct Loader {
  std::filesystem::path file;
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(file, 0, 0, fmt::format("{}: {}", where, what));
  }

  std::vector<int> ints(const json& j, const std::string& where) const {
    if (!j.is_array() || j.empty()) fail(where, "expected a non-empty array of integers");
    std::vector<int> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_number_integer() || j[i].get<long long>() < 0 || j[i].get<long long>() > 65536)
        fail(fmt::format("{}[{}]", where, i), fmt::format("expected an integer in 0..65536, got {}", j[i].dump()));
      out.push_back(j[i].get<int>());
    }
    return out;
  }

  KnobLists knobs(const json& j, const std::string& where, int stage) const {
    if (!j.is_object()) fail(where, "expected an object of knob value lists");
    KnobLists k;
    KernelConfig const d;
    k.block_m = {d.block_m}, k.block_n = {d.block_n}, k.block_k = {d.block_k}, k.warps = {d.warps};
    k.kpack = {d.kpack}, k.nonkdim = {d.nonkdim}, k.waves = {d.waves}, k.stages = {d.stages};
    k.ksplit = {1}, k.stage2_mode = {Stage2Mode::atomic};
    for (auto const& [key, value] : j.items()) {
      auto const w = fmt::format("{}.{}", where, key);
      if (key == "block_m") k.block_m = ints(value, w);
      else if (key == "block_n") k.block_n = ints(value, w);
      else if (key == "block_k") k.block_k = ints(value, w);
      else if (key == "warps") k.warps = ints(value, w);
      else if (key == "kpack") k.kpack = ints(value, w);
      else if (key == "nonkdim") k.nonkdim = ints(value, w);
      else if (key == "waves") k.waves = ints(value, w);
      else if (key == "stages") k.stages = ints(value, w);
      else if (key == "swap_ab" || key == "staged" || key == "repack" || key == "fragment_decode" || key == "wgmma" ||
               key == "wgmma_k16" || key == "wgmma_k32" || key == "gemv" || key == "h_bf16" || (key == "x_bf16" && stage == 1) ||
               key == "tile_major" || (key == "sort_halves" && stage == 2)) {
        auto& list = key == "swap_ab"     ? k.swap_ab
                     : key == "staged"    ? k.staged
                     : key == "repack"    ? k.repack
                     : key == "wgmma"     ? k.wgmma
                     : key == "wgmma_k16" ? k.wgmma_k16
                     : key == "wgmma_k32" ? k.wgmma_k32
                     : key == "gemv"      ? k.gemv
                     : key == "h_bf16"    ? k.h_bf16
                     : key == "x_bf16"    ? k.x_bf16
                     : key == "tile_major" ? k.tile_major
                     : key == "sort_halves" ? k.sort_halves
                                          : k.fragment_decode;
        list = ints(value, w);
        for (std::size_t i = 0; i < list.size(); ++i)
          if (list[i] > 1) fail(fmt::format("{}[{}]", w, i), "expected 0 or 1");
      }
      else if (key == "ksplit") k.ksplit = ints(value, w);
      else if (key == "stage2_mode" && stage == 2) {
        if (!value.is_array() || value.empty()) fail(w, "expected a non-empty array of \"atomic\"/\"reduce\"");
        k.stage2_mode.clear();
        for (std::size_t i = 0; i < value.size(); ++i) {
          if (value[i] == "atomic") k.stage2_mode.push_back(Stage2Mode::atomic);
          else if (value[i] == "reduce") k.stage2_mode.push_back(Stage2Mode::reduce);
          else fail(fmt::format("{}[{}]", w, i), fmt::format("expected \"atomic\" or \"reduce\", got {}", value[i].dump()));
        }
      } else if (key == "comment") {
        continue;
      } else {
        fail(w, stage == 1 ? "unknown stage-one knob (block_m, block_n, block_k, warps, kpack, nonkdim, waves, stages, swap_ab, staged, fragment_decode, wgmma, wgmma_k16, wgmma_k32, gemv, repack, h_bf16, x_bf16, tile_major, ksplit)"
                           : "unknown stage-two knob (block_m, block_n, block_k, warps, kpack, nonkdim, waves, stages, swap_ab, staged, fragment_decode, wgmma, wgmma_k16, wgmma_k32, gemv, repack, h_bf16, tile_major, sort_halves, ksplit, stage2_mode)");
      }
    }
    return k;
  }

  std::vector<KnobLists> stage(const json& parent, const std::string& where, int s) const {
    auto const key = fmt::format("stage{}", s);
    auto const w = fmt::format("{}.{}", where, key);
    if (!parent.contains(key)) fail(w, "missing");
    auto const& j = parent.at(key);
    std::vector<KnobLists> out;
    if (j.is_array()) {
      if (j.empty()) fail(w, "expected at least one knob object");
      for (std::size_t i = 0; i < j.size(); ++i) out.push_back(knobs(j[i], fmt::format("{}[{}]", w, i), s));
    } else {
      out.push_back(knobs(j, w, s));
    }
    return out;
  }

  ArchSpace arch_space(const json& j, const std::string& where) const {
    if (!j.is_object()) fail(where, "expected an object with arch, stage1 and stage2");
    if (!j.contains("arch") || !j.at("arch").is_string()) fail(where + ".arch", "expected an arch string (sm_90, gfx90a, gfx942, gfx950)");
    ArchSpace a;
    try {
      a.arch = parse_arch(j.at("arch").get<std::string>());
    } catch (const Error& e) {
      fail(where + ".arch", e.what());
    }
    a.stage1 = stage(j, where, 1);
    a.stage2 = stage(j, where, 2);
    return a;
  }
};

void line_col(std::string_view text, std::size_t byte, std::int64_t& line, std::int64_t& col) {
  line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
}

template <class F>
void product(const KnobLists& k, int stage, F&& f) {
  for (int bm : k.block_m) for (int bn : k.block_n) for (int bk : k.block_k)
  for (int w : k.warps) for (int kp : k.kpack) for (int nk : k.nonkdim)
  for (int wv : k.waves) for (int st : k.stages) for (int sw : k.swap_ab) for (int sg : k.staged)
  for (int rp : k.repack) for (int fd : k.fragment_decode) for (int wg : k.wgmma) for (int k16 : k.wgmma_k16) for (int k32 : k.wgmma_k32)
  for (int gv : k.gemv)
  for (int hb : k.h_bf16) for (int xb : k.x_bf16) for (int tm : k.tile_major) for (int hs : k.sort_halves) for (int ks : k.ksplit)
  for (auto mode : (stage == 2 ? k.stage2_mode : std::vector<Stage2Mode>{Stage2Mode::atomic})) {
    KernelConfig c;
    c.stage = stage, c.block_m = bm, c.block_n = bn, c.block_k = bk, c.warps = w, c.kpack = kp;
    c.nonkdim = nk, c.waves = wv, c.stages = st, c.ksplit = ks, c.stage2_mode = mode;
    c.swap_ab = sw == 1;
    c.staged = sg == 1;
    c.repacked = rp == 1;
    c.fragment_decode = fd == 1;
    c.wgmma = wg == 1;
    c.wgmma_k16 = k16 == 1;
    c.wgmma_k32 = k32 == 1;
    c.gemv = gv == 1;
    c.h_bf16 = hb == 1;
    c.x_bf16 = xb == 1;
    c.tile_major = tm == 1;
    c.sort_halves = hs == 1;
    f(c);
  }
}

}  // namespace

const ArchSpace& SearchSpace::for_arch(Arch arch) const {
  for (auto const& a : arches)
    if (a.arch == arch) return a;
  throw Error(fmt::format("{}: no search space for arch {}", source.string(), to_string(arch)));
}

SearchSpace load_search_space(const std::filesystem::path& path) {
  return parse_search_space(read_file(path), path);
}

SearchSpace parse_search_space(std::string_view text, const std::filesystem::path& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    std::int64_t line = 0, col = 0;
    line_col(text, e.byte, line, col);
    throw InputError(path, line, col, fmt::format("invalid JSON: {}", e.what()));
  } catch (const json::exception& e) {
    // Not only syntax: a number too large for any JSON number type is out_of_range.406
    // (found by test/fuzz/fuzz_search_space). It carries no position, so name only the file.
    throw InputError(path, 0, 0, fmt::format("invalid JSON: {}", e.what()));
  }
  Loader const l{path};
  SearchSpace s;
  s.source = path;
  if (!j.is_object()) l.fail("$", "expected an object with \"arch\" or \"spaces\"");
  if (j.contains("spaces")) {
    auto const& sp = j.at("spaces");
    if (!sp.is_array() || sp.empty()) l.fail("$.spaces", "expected a non-empty array of arch spaces");
    for (std::size_t i = 0; i < sp.size(); ++i) s.arches.push_back(l.arch_space(sp[i], fmt::format("$.spaces[{}]", i)));
  } else {
    s.arches.push_back(l.arch_space(j, "$"));
  }
  std::set<Arch> seen;
  for (std::size_t i = 0; i < s.arches.size(); ++i)
    if (!seen.insert(s.arches[i].arch).second)
      l.fail(fmt::format("$.spaces[{}].arch", i), fmt::format("arch {} appears twice", to_string(s.arches[i].arch)));
  return s;
}

std::vector<Candidate> enumerate(const SearchSpace& space, Arch arch, const moe::MoeShape& shape) {
  auto const& a = space.for_arch(arch);
  std::vector<Candidate> out;
  std::set<std::string> names;
  for (int stage : {1, 2}) {
    for (auto const& k : (stage == 1 ? a.stage1 : a.stage2)) {
      product(k, stage, [&](KernelConfig c) {
        c.dtype = shape.dtype;
        c.fp8 = shape.dtype == DtypePath::a8w4 ? shape.fp8_flavor : Fp8Flavor::ocp;  // as the name carries it
        c.gate_up = shape.gate_up;
        c.doweight_stage1 = shape.doweight_stage1;
        if (!names.insert(c.name()).second) return;
        out.push_back({c, check_config(c, arch, shape)});
      });
    }
  }
  return out;
}

}  // namespace moetune::search
