#include "autotune/search/kernel_config.hpp"

#include <charconv>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::search {
namespace {

std::string_view format_token(const KernelConfig& c) {
  if (c.dtype != DtypePath::a8w4) return "bf16";
  return c.fp8 == Fp8Flavor::fnuz ? "fnuz" : "fp8";
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    auto const pos = s.find('_', start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? s.npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

[[noreturn]] void bad(std::string_view name, std::size_t index, std::string_view token,
                      std::string_view expected) {
  throw Error(fmt::format("kernel name '{}': token {} '{}' is invalid: expected {}", name,
                          index + 1, token, expected));
}

// "<prefix><int>" -> int, or throws naming the token.
int prefixed_int(std::string_view name, std::size_t index, std::string_view token,
                 std::string_view prefix, std::string_view expected) {
  if (token.substr(0, prefix.size()) != prefix) bad(name, index, token, expected);
  auto const digits = token.substr(prefix.size());
  int value = 0;
  auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 0)
    bad(name, index, token, expected);
  return value;
}

}  // namespace

std::string_view to_string(Stage2Mode mode) {
  return mode == Stage2Mode::atomic ? "atomic" : "reduce";
}

KernelConfig compiled_as(const KernelConfig& c) {
  if (c.stage == 1 && c.x_bf16 && c.dtype == DtypePath::a8w4 && c.wgmma) {  // (other main loops: refused)
    KernelConfig k = c;
    k.dtype = DtypePath::a16w4;  // fp8, h_bf16 and x_bf16 kept: they pick the epilogue
    return k;
  }
  if (!(c.stage == 2 && c.h_bf16 && c.dtype == DtypePath::a8w4)) return c;
  KernelConfig k = c;
  k.dtype = DtypePath::a16w4;
  k.fp8 = Fp8Flavor::ocp;
  k.h_bf16 = false;
  return k;
}

KernelConfig with_sort_of(KernelConfig other, const KernelConfig& subject) {
  if (sort_block_m(other) == sort_block_m(subject)) return other;
  other.block_m = sort_block_m(subject);
  if (other.stage == 2) other.sort_halves = false;
  return other;
}

WeightLayout weight_layout(const KernelConfig& c) {
  if (c.wgmma)
    return compiled_as(c).dtype != c.dtype ? WeightLayout::wgmma_tiles_a16w4 : WeightLayout::wgmma_tiles;
  return c.repacked ? WeightLayout::repacked : WeightLayout::natural;
}

std::string_view to_string(WeightLayout layout) {
  switch (layout) {
    case WeightLayout::natural: return "natural";
    case WeightLayout::repacked: return "repacked";
    case WeightLayout::wgmma_tiles: return "wgmma tiles";
    case WeightLayout::wgmma_tiles_a16w4: return "wgmma tiles (A16W4 words)";
  }
  return "?";
}

std::string KernelConfig::name() const {
  std::string s = fmt::format("moetune_s{}_{}_{}_t{}x{}x{}_w{}_kp{}_nk{}_wv{}_st{}", stage,
                              moe::to_string(dtype), format_token(*this), block_m, block_n,
                              block_k, warps, kpack, nonkdim, waves, stages);
  if (swap_ab) s += "_sab";
  if (staged) s += "_stg";
  if (fragment_decode) s += "_fd";
  if (wgmma) s += "_wg";
  if (wgmma_k16) s += "_k16";
  if (wgmma_k32) s += "_k32";
  if (gemv) s += "_gv";
  if (repacked) s += "_rp";
  if (h_bf16) s += "_hb";
  if (x_bf16) s += "_xb";
  if (tile_major) s += "_tm";
  if (sort_halves) s += "_hs";
  if (stage == 1) {
    if (ksplit > 1) s += fmt::format("_ks{}", ksplit);  // split-K only: older names stay as they were
    s += fmt::format("_{}_dw{}", gate_up == GateUpLayout::interleaved ? "gi" : "gs",
                     doweight_stage1 ? 1 : 0);
  } else {
    s += fmt::format("_ks{}_dw{}_{}", ksplit, doweight_stage1 ? 1 : 0, to_string(stage2_mode));
  }
  return s;
}

KernelConfig parse_kernel_name(std::string_view name) {
  auto t = split(name);
  KernelConfig c;
  // The optional main-loop, layout and format tokens (swapped operands, staged, fragment
  // decode, wgmma, k16, k32 or gv, then repacked weights, then bf16 h, then bf16 x, then the
  // tile-major grid, then the sort read in halves) sit after the stages
  // token; take them out so the positions below are those of every other name.
  while (t.size() > 10 && (t[10] == "sab" || t[10] == "stg" || t[10] == "fd" || t[10] == "wg" || t[10] == "k16" ||
                           t[10] == "k32" || t[10] == "gv" || t[10] == "rp" || t[10] == "hb" || t[10] == "xb" || t[10] == "tm" ||
                           t[10] == "hs")) {
    if (c.sort_halves) bad(name, 10, t[10], "'hs' last among the optional tokens");
    if (t[10] == "hs") {  // last: only 'tm' may precede it among the grid tokens
      c.sort_halves = true;
      t.erase(t.begin() + 10);
      continue;
    }
    bool& flag = t[10] == "sab"   ? c.swap_ab
                 : t[10] == "stg" ? c.staged
                 : t[10] == "fd"  ? c.fragment_decode
                 : t[10] == "wg"  ? c.wgmma
                 : t[10] == "k16" ? c.wgmma_k16
                 : t[10] == "k32" ? c.wgmma_k32
                 : t[10] == "gv"  ? c.gemv
                 : t[10] == "rp"  ? c.repacked
                 : t[10] == "hb"  ? c.h_bf16
                 : t[10] == "tm"  ? c.tile_major
                                  : c.x_bf16;
    if (flag) bad(name, 10, t[10], "the token once");
    if (c.tile_major) bad(name, 10, t[10], "'tm' last among the optional tokens (only 'hs' follows it)");
    if (t[10] == "tm") {  // last: no order rule below concerns it
      flag = true;
      t.erase(t.begin() + 10);
      continue;
    }
    if (c.x_bf16) bad(name, 10, t[10], "'xb' last among 'sab', 'stg', 'fd', 'wg', 'k16', 'k32', 'gv', 'rp', 'hb', 'xb'");
    if (t[10] != "hb" && t[10] != "xb" && c.h_bf16)
      bad(name, 10, t[10], "'hb' last among 'sab', 'stg', 'fd', 'wg', 'k16', 'k32', 'gv', 'rp', 'hb' (only 'xb' follows it)");
    if (t[10] != "rp" && t[10] != "hb" && t[10] != "xb" && c.repacked)
      bad(name, 10, t[10], "'sab', 'stg', 'fd', 'wg', 'k16', 'k32' or 'gv' before 'rp'");
    if (t[10] == "fd" && !c.staged) bad(name, 10, t[10], "'stg' before 'fd' (fragment decode is a staged main loop)");
    if (t[10] == "k16" && !c.wgmma) bad(name, 10, t[10], "'wg' before 'k16' (the k16 decode is a wgmma main loop's)");
    if (t[10] == "k32" && !c.wgmma) bad(name, 10, t[10], "'wg' before 'k32' (the k32 decode is a wgmma main loop's)");
    if (t[10] == "gv" && !c.wgmma) bad(name, 10, t[10], "'wg' before 'gv' (the gemv loop reads the wgmma tile layout)");
    if ((t[10] == "k16" && c.wgmma_k32) || (t[10] == "k32" && c.wgmma_k16))
      bad(name, 10, t[10], "one of 'k16' and 'k32' (two decode steps)");
    if ((t[10] == "gv" && (c.wgmma_k16 || c.wgmma_k32)) || ((t[10] == "k16" || t[10] == "k32") && c.gemv))
      bad(name, 10, t[10], "one of 'k16', 'k32' and 'gv' (the gemv loop has its own decode step)");
    if ((t[10] == "sab" || t[10] == "stg") && c.fragment_decode) bad(name, 10, t[10], "'sab' or 'stg' before 'fd'");
    if ((t[10] == "sab" || t[10] == "stg" || t[10] == "fd") && c.wgmma) bad(name, 10, t[10], "'sab', 'stg' or 'fd' before 'wg'");
    flag = true;
    t.erase(t.begin() + 10);
  }
  if (t.empty() || t[0] != "moetune") bad(name, 0, t.empty() ? "" : t[0], "'moetune'");
  if (t.size() < 2) throw Error(fmt::format("kernel name '{}' is too short", name));
  if (t[1] == "s1") c.stage = 1;
  else if (t[1] == "s2") c.stage = 2;
  else bad(name, 1, t[1], "'s1' or 's2'");
  // A stage-one name carries "ks<N>" before its gate/up token only when it splits K (N >= 2).
  if (c.stage == 1 && t.size() > 10 && t[10].substr(0, 2) == "ks") {
    c.ksplit = prefixed_int(name, 10, t[10], "ks", "ks<ksplit>");
    if (c.ksplit < 2) bad(name, 10, t[10], "ks2 or more (a stage-one name names its split-K only when it splits)");
    t.erase(t.begin() + 10);
  }
  std::size_t const want = c.stage == 1 ? 12 : 13;
  if (t.size() != want)
    throw Error(fmt::format("kernel name '{}' has {} '_'-separated tokens, a stage-{} name has {}",
                            name, t.size(), c.stage, want));
  if (t[2] == "a16w4") c.dtype = DtypePath::a16w4;
  else if (t[2] == "a8w4") c.dtype = DtypePath::a8w4;
  else if (t[2] == "bf16") c.dtype = DtypePath::bf16;
  else bad(name, 2, t[2], "a dtype path: a16w4, a8w4 or bf16");
  if (c.dtype == DtypePath::a8w4) {
    if (t[3] == "fp8") c.fp8 = Fp8Flavor::ocp;
    else if (t[3] == "fnuz") c.fp8 = Fp8Flavor::fnuz;
    else bad(name, 3, t[3], "'fp8' or 'fnuz' for a8w4");
  } else if (t[3] != "bf16") {
    bad(name, 3, t[3], "'bf16' for a16w4 and bf16");
  }
  {
    auto const tile = t[4];
    auto const x1 = tile.find('x');
    auto const x2 = x1 == tile.npos ? tile.npos : tile.find('x', x1 + 1);
    if (tile.empty() || tile[0] != 't' || x1 == tile.npos || x2 == tile.npos)
      bad(name, 4, tile, "a tile t<block_m>x<block_n>x<block_k>");
    auto const num = [&](std::string_view d) {
      int v = 0;
      auto const [end, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
      if (d.empty() || ec != std::errc() || end != d.data() + d.size() || v <= 0)
        bad(name, 4, tile, "a tile t<block_m>x<block_n>x<block_k> of positive integers");
      return v;
    };
    c.block_m = num(tile.substr(1, x1 - 1));
    c.block_n = num(tile.substr(x1 + 1, x2 - x1 - 1));
    c.block_k = num(tile.substr(x2 + 1));
  }
  c.warps = prefixed_int(name, 5, t[5], "w", "w<warps>");
  c.kpack = prefixed_int(name, 6, t[6], "kp", "kp<kpack>");
  c.nonkdim = prefixed_int(name, 7, t[7], "nk", "nk<nonkdim>");
  c.waves = prefixed_int(name, 8, t[8], "wv", "wv<waves>");
  c.stages = prefixed_int(name, 9, t[9], "st", "st<stages>");
  if (c.stage == 1) {
    if (t[10] == "gi") c.gate_up = GateUpLayout::interleaved;
    else if (t[10] == "gs") c.gate_up = GateUpLayout::separated;
    else bad(name, 10, t[10], "'gi' (interleaved) or 'gs' (separated)");
    auto const dw = prefixed_int(name, 11, t[11], "dw", "dw0 or dw1");
    if (dw > 1) bad(name, 11, t[11], "dw0 or dw1");
    c.doweight_stage1 = dw == 1;
  } else {
    c.ksplit = prefixed_int(name, 10, t[10], "ks", "ks<ksplit>");
    auto const dw = prefixed_int(name, 11, t[11], "dw", "dw0 or dw1");
    if (dw > 1) bad(name, 11, t[11], "dw0 or dw1");
    c.doweight_stage1 = dw == 1;
    if (t[12] == "atomic") c.stage2_mode = Stage2Mode::atomic;
    else if (t[12] == "reduce") c.stage2_mode = Stage2Mode::reduce;
    else bad(name, 12, t[12], "'atomic' or 'reduce'");
  }
  return c;
}

}  // namespace moetune::search
