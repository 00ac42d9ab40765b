#pragma once
// Search spaces as data (search_spaces/*.json): value lists per knob per stage, per arch.
//
//   { "arch": "sm_90",                      // or "spaces": [ {"arch": ..., ...}, ... ]
//     "stage1": { "block_m": [16, 32], "block_n": [64], "block_k": [256], "warps": [4],
//                 "kpack": [1], "nonkdim": [16], "waves": [0], "stages": [2] },
//     "stage2": { ...same knobs..., "ksplit": [1, 2], "stage2_mode": ["atomic", "reduce"] } }
//
// "ksplit" is a stage-one knob too (the wgmma main loop's split over K in a cluster); the
// rules prune it elsewhere.
//
// A stage may also be an array of such objects: the union of their cartesian products (so a
// small space can list exact variants). Knobs left out take KernelConfig's defaults.
// "swap_ab": [0, 1] adds the swapped-operand (decode-size) kernels; "staged": [0, 1] the
// staged main loop (many tokens per expert, sm_90); "wgmma": [0, 1] the warpgroup-MMA main loop
// (sm_90a); "wgmma_k16": [0, 1] its A16W4 decode one k16 step at a time; "wgmma_k32": [0, 1]
// two k16 steps at a time (a configuration with both is pruned); "gemv": [0, 1] the register
// GEMV reading the same tiles (the decode sizes; with wgmma 1, not with k16 or k32); "h_bf16": [0, 1]
// an A8W4 pair keeping h in bf16 (its stage two then the A16W4 kernel; pruned for other dtypes);
// "x_bf16": [0, 1] (stage one) an A8W4 stage one reading x upcast to bf16 (A16W4's main loop);
// "tile_major": [0, 1] the stage kernel's grid with the column tiles on x (every arch).
// "sort_halves": [0, 1] (stage two) reads a sort of 2 x block_m tokens per block in halves, so
// its stage one's block_m is twice its own (every arch).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/arch.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::search {

struct KnobLists {
  std::vector<int> block_m, block_n, block_k, warps, kpack, nonkdim, waves, stages, ksplit;
  std::vector<Stage2Mode> stage2_mode;
  std::vector<int> swap_ab{0};  // 0 = tokens on the MMA's M side, 1 = weights there
  std::vector<int> staged{0};   // 1 = the staged main loop (LDS ring, weights decoded in LDS)
  std::vector<int> repack{0};   // 1 = MXFP4 weights in the repacked layout (moe/mxfp4_repack.hpp)
  std::vector<int> fragment_decode{0};  // 1 = staged with each warp decoding its own fragments
  std::vector<int> wgmma{0};  // 1 = the wgmma main loop (sm_90a; weights in the wgmma tile layout)
  std::vector<int> wgmma_k16{0};  // 1 = its A16W4 decode one k16 step at a time
  std::vector<int> wgmma_k32{0};  // 1 = two k16 steps at a time
  std::vector<int> gemv{0};       // 1 = the register GEMV on the wgmma tiles (KernelConfig::gemv)
  std::vector<int> h_bf16{0};     // 1 = an A8W4 pair keeps h in bf16 (KernelConfig::h_bf16)
  std::vector<int> x_bf16{0};     // 1 = an A8W4 stage one reads x in bf16 (KernelConfig::x_bf16)
  std::vector<int> tile_major{0};  // 1 = the stage's grid tile-major (KernelConfig::tile_major)
  std::vector<int> sort_halves{0};  // stage two: 1 = reads the sort's blocks in halves (KernelConfig::sort_halves)
};

struct ArchSpace {
  Arch arch = Arch::sm_90;
  std::vector<KnobLists> stage1, stage2;  // union of cartesian products
};

struct SearchSpace {
  std::filesystem::path source;
  std::vector<ArchSpace> arches;
  // The space for an arch; throws moetune::Error naming the file when it has none.
  [[nodiscard]] const ArchSpace& for_arch(Arch arch) const;
};

// Throws moetune::InputError naming the file and the JSON path ("$.stage1.block_m[2]") of
// anything malformed, or the line and column of a JSON syntax error.
[[nodiscard]] SearchSpace load_search_space(const std::filesystem::path& path);
// The same from text already in memory; `path` names it in messages (and SearchSpace::source).
// Exists so the parser can be tested and fuzzed without files.
[[nodiscard]] SearchSpace parse_search_space(std::string_view text,
                                             const std::filesystem::path& path);

struct Candidate {
  KernelConfig config;
  std::optional<std::string> pruned_reason;  // set: invalid for this arch/shape, not compiled
};

// Every configuration of the arch's space for this shape (data path, layout, doweight and FP8
// flavour come from the shape), stage one first, in file order, duplicates removed; invalid
// ones carry the first rule they break.
[[nodiscard]] std::vector<Candidate> enumerate(const SearchSpace& space, Arch arch,
                                               const moe::MoeShape& shape);

}  // namespace moetune::search
