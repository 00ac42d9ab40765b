#include "autotune/runtime/prepared_weights.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/moe/mxfp4_repack.hpp"
#include "autotune/moe/mxfp4_wgmma_tiles.hpp"

namespace moetune::runtime {
namespace {

// A DeepSeek layer's w1 codes are over a gigabyte: rearrange through a bounded host buffer.
constexpr std::size_t chunk_bytes = std::size_t{64} << 20;  // a multiple of 4

gpu::DeviceBuffer repacked_copy(const gpu::Device& device, const void* natural, std::size_t bytes) {
  gpu::DeviceBuffer out(device, bytes);
  std::vector<std::byte> host(std::min(bytes, chunk_bytes));
  for (std::size_t offset = 0; offset < bytes; offset += chunk_bytes) {
    std::span<std::byte> const part(host.data(), std::min(chunk_bytes, bytes - offset));
    gpu::copy_device_to_host(device, static_cast<const std::byte*>(natural) + offset, part);
    auto const repacked = moe::repack_mxfp4(std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(part.data()), part.size()));
    out.upload(std::as_bytes(std::span<const std::uint8_t>(repacked)), offset);
  }
  return out;
}

// Codes (and, unless `out_scales` is null, scales) of one matrix in the wgmma tile layout, in
// the tile words of `words`, a whole number of experts per host chunk (the layout keeps each
// expert's bytes where the natural one has them). The scales' layout is the same for every
// words' dtype, so a matrix needed in two words uploads them once.
void tiled_copy(const gpu::Device& device, const moe::MoeShape& shape, moe::WgmmaMatrix m, moe::DtypePath words,
                const void* codes, const void* scales, gpu::DeviceBuffer& out_codes, gpu::DeviceBuffer* out_scales) {
  if (!moe::wgmma_tiles_possible(shape, m))
    throw Error(fmt::format("the {} weights of {} have no wgmma tile layout (K must be a multiple of 64, MXFP4)",
                            m == moe::WgmmaMatrix::w1 ? "stage-one" : "stage-two", moe::to_string(shape)));
  std::size_t const expert_codes = (m == moe::WgmmaMatrix::w1 ? w1_bytes(shape) : w2_bytes(shape)) /
                                   static_cast<std::size_t>(shape.experts);
  std::size_t const expert_scales = expert_codes / 16;
  std::size_t const per_chunk = std::max<std::size_t>(1, chunk_bytes / expert_codes);
  out_codes = gpu::DeviceBuffer(device, expert_codes * shape.experts);
  if (out_scales != nullptr) *out_scales = gpu::DeviceBuffer(device, expert_scales * shape.experts);
  std::vector<std::uint8_t> host_codes, host_scales;
  for (std::size_t e0 = 0; e0 < static_cast<std::size_t>(shape.experts); e0 += per_chunk) {
    std::size_t const n = std::min(per_chunk, static_cast<std::size_t>(shape.experts) - e0);
    host_codes.resize(n * expert_codes);
    host_scales.resize(n * expert_scales);
    gpu::copy_device_to_host(device, static_cast<const std::byte*>(codes) + e0 * expert_codes,
                             std::as_writable_bytes(std::span(host_codes)));
    gpu::copy_device_to_host(device, static_cast<const std::byte*>(scales) + e0 * expert_scales,
                             std::as_writable_bytes(std::span(host_scales)));
    moe::MoeShape part = shape;
    part.experts = static_cast<int>(n);
    auto const tiles = moe::make_wgmma_tiles(part, m, words, host_codes, host_scales);
    out_codes.upload(std::as_bytes(std::span(tiles.codes)), e0 * expert_codes);
    if (out_scales != nullptr) out_scales->upload(std::as_bytes(std::span(tiles.scales)), e0 * expert_scales);
  }
}

}  // namespace

std::size_t w1_bytes(const moe::MoeShape& s) {
  auto const elements = static_cast<std::size_t>(s.experts) * 2 * s.inter * s.hidden;
  return s.dtype == moe::DtypePath::bf16 ? elements * 2 : elements / 2;
}

std::size_t w2_bytes(const moe::MoeShape& s) {
  auto const elements = static_cast<std::size_t>(s.experts) * s.hidden * s.inter;
  return s.dtype == moe::DtypePath::bf16 ? elements * 2 : elements / 2;
}

PreparedWeights::PreparedWeights(const gpu::Device& device, const moe::MoeShape& shape,
                                 const LayerWeights& caller, LayoutsNeeded w1, LayoutsNeeded w2)
    : m_caller(caller) {
  bool const any = w1.repacked || w2.repacked || w1.wgmma_tiles || w2.wgmma_tiles || w1.wgmma_tiles_a16w4 ||
                   w2.wgmma_tiles_a16w4;
  if (any && shape.dtype == moe::DtypePath::bf16) {
    throw Error("bf16 weights have no repacked or wgmma tile layout");
  }
  auto const start = std::chrono::steady_clock::now();
  if (w1.repacked) m_w1_repacked = repacked_copy(device, caller.w1, w1_bytes(shape));
  if (w2.repacked) m_w2_repacked = repacked_copy(device, caller.w2, w2_bytes(shape));
  if ((w1.wgmma_tiles_a16w4 || w2.wgmma_tiles_a16w4) && shape.dtype != moe::DtypePath::a8w4)
    throw Error("wgmma tiles in A16W4 words are asked for an A8W4 layer only");
  struct Matrix {
    moe::WgmmaMatrix m;
    const LayoutsNeeded& need;
    const void *codes, *scales;
    gpu::DeviceBuffer &tiles, &tile_scales, &tiles_a16w4;
  };
  for (auto const& x : {Matrix{moe::WgmmaMatrix::w1, w1, caller.w1, caller.w1_scales, m_w1_tiles, m_w1_tile_scales,
                               m_w1_tiles_a16w4},
                        Matrix{moe::WgmmaMatrix::w2, w2, caller.w2, caller.w2_scales, m_w2_tiles, m_w2_tile_scales,
                               m_w2_tiles_a16w4}}) {
    if (x.need.wgmma_tiles) tiled_copy(device, shape, x.m, shape.dtype, x.codes, x.scales, x.tiles, &x.tile_scales);
    if (x.need.wgmma_tiles_a16w4)
      tiled_copy(device, shape, x.m, moe::DtypePath::a16w4, x.codes, x.scales, x.tiles_a16w4,
                 x.need.wgmma_tiles ? nullptr : &x.tile_scales);
  }
  m_repack_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const void* PreparedWeights::codes(int stage, search::WeightLayout layout) const {
  bool const s1 = stage == 1;
  switch (layout) {
    case search::WeightLayout::natural: break;
    case search::WeightLayout::repacked: return (s1 ? m_w1_repacked : m_w2_repacked).data();
    case search::WeightLayout::wgmma_tiles: return (s1 ? m_w1_tiles : m_w2_tiles).data();
    case search::WeightLayout::wgmma_tiles_a16w4: return (s1 ? m_w1_tiles_a16w4 : m_w2_tiles_a16w4).data();
  }
  return s1 ? m_caller.w1 : m_caller.w2;
}

const void* PreparedWeights::scales(int stage, search::WeightLayout layout) const {
  bool const s1 = stage == 1;
  // Both words of the wgmma tiles share one scale layout (tiled_copy).
  if (layout == search::WeightLayout::wgmma_tiles || layout == search::WeightLayout::wgmma_tiles_a16w4)
    return (s1 ? m_w1_tile_scales : m_w2_tile_scales).data();
  return s1 ? m_caller.w1_scales : m_caller.w2_scales;
}

}  // namespace moetune::runtime
