#pragma once
// A layer's weights in every layout its kernels read: the caller's tensors as they are
// (AITER's natural MXFP4 layout, or bf16), plus, for the stages whose kernels read another
// layout, copies the layer owns: the MXFP4 codes repacked (`_rp`, moe/mxfp4_repack.hpp; the
// scales are the caller's) and codes and scales in the wgmma tile layout (`_wg`,
// moe/mxfp4_wgmma_tiles.hpp; for the A8W4 kernels compiled as A16W4's main loop, the codes in
// A16W4's words beside them, sharing the scales).
// Each is prepared once, at prepare time.
#include <cstddef>

#include "autotune/gpu/gpu.hpp"
#include "autotune/moe/moe_shape.hpp"
#include "autotune/search/kernel_config.hpp"

namespace moetune::runtime {

// Device pointers owned by the caller (moetune_layer_weights).
struct LayerWeights {
  const void* w1 = nullptr;
  const void* w1_scales = nullptr;
  const void* w2 = nullptr;
  const void* w2_scales = nullptr;
};

// Bytes of the w1 / w2 arrays the kernels read (codes for MXFP4, values for bf16).
[[nodiscard]] std::size_t w1_bytes(const moe::MoeShape& shape);
[[nodiscard]] std::size_t w2_bytes(const moe::MoeShape& shape);

// The layouts one matrix is needed in beside the caller's own.
struct LayoutsNeeded {
  bool repacked = false;
  bool wgmma_tiles = false;
  bool wgmma_tiles_a16w4 = false;  // A8W4 codes in A16W4's tile words (an `_xb` stage one, an `_hb` stage two)
};

class PreparedWeights {
 public:
  // Prepares each layout asked for (MXFP4 paths only): the caller's arrays are copied to the
  // host in chunks, rearranged and uploaded into memory this object owns. Throws Error when a
  // layout cannot be made for the shape (bf16 weights; wgmma tiles need K in 64s).
  PreparedWeights(const gpu::Device& device, const moe::MoeShape& shape, const LayerWeights& caller,
                  LayoutsNeeded w1, LayoutsNeeded w2);

  // Codes and scales of stage one's (w1) or stage two's (w2) matrix in a layout prepared here.
  [[nodiscard]] const void* codes(int stage, search::WeightLayout layout) const;
  [[nodiscard]] const void* scales(int stage, search::WeightLayout layout) const;
  [[nodiscard]] std::size_t repacked_bytes() const { return m_w1_repacked.size() + m_w2_repacked.size(); }
  [[nodiscard]] std::size_t tiled_bytes() const {
    return m_w1_tiles.size() + m_w1_tile_scales.size() + m_w2_tiles.size() + m_w2_tile_scales.size() +
           m_w1_tiles_a16w4.size() + m_w2_tiles_a16w4.size();
  }
  [[nodiscard]] double repack_seconds() const { return m_repack_seconds; }

 private:
  LayerWeights m_caller;
  gpu::DeviceBuffer m_w1_repacked, m_w2_repacked;
  gpu::DeviceBuffer m_w1_tiles, m_w1_tile_scales, m_w2_tiles, m_w2_tile_scales;
  gpu::DeviceBuffer m_w1_tiles_a16w4, m_w2_tiles_a16w4;  // their scales: m_w1/m_w2_tile_scales
  double m_repack_seconds = 0;
};

}  // namespace moetune::runtime
