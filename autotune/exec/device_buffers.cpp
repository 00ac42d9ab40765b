#include "autotune/exec/device_buffers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/core/fast_hash.hpp"
#include "autotune/moe/mxfp4_repack.hpp"
#include "autotune/moe/mxfp4_wgmma_tiles.hpp"

namespace moetune::exec {
namespace {

template <class T>
gpu::DeviceBuffer upload_new(const gpu::Device& device, const std::vector<T>& host) {
  if (host.empty()) return {};
  gpu::DeviceBuffer buffer(device, host.size() * sizeof(T));
  buffer.upload(host);
  return buffer;
}

template <class T>
void upload_same_size(gpu::DeviceBuffer& buffer, const std::vector<T>& host, const char* what) {
  if (host.size() * sizeof(T) != buffer.size()) {
    throw Error(fmt::format("replacing {} in place: {} bytes given, the buffer holds {}", what,
                            host.size() * sizeof(T), buffer.size()));
  }
  if (!host.empty()) buffer.upload(host);
}

// Hashes a device buffer through one reusable host chunk: no multi-gigabyte allocation (and
// its page faults) per digest of a DeepSeek layer's weights. The chunking is fixed, so equal
// bytes always give equal digests.
void hash_buffer(FastHash64& hash, const gpu::DeviceBuffer& b) {
  constexpr std::size_t chunk = std::size_t{64} << 20;
  thread_local std::vector<std::byte> host(chunk);
  for (std::size_t offset = 0; offset < b.size(); offset += chunk) {
    std::span<std::byte> const part(host.data(), std::min(chunk, b.size() - offset));
    b.download(part, offset);
    hash.update(part);
  }
}

}  // namespace

DeviceWeights::DeviceWeights(const gpu::Device& device, const moe::MoeShape& shape,
                             const moe::Weights& w, int copies) {
  if (copies < 1) throw Error("DeviceWeights: at least one weight copy is needed");
  std::vector<std::uint8_t> w1_repacked, w2_repacked;
  moe::WgmmaTiles w1_tiles, w2_tiles;
  std::vector<std::uint8_t> w1_tiles_a16w4, w2_tiles_a16w4;  // codes only: the scales are the tiles'.
  if (shape.dtype != moe::DtypePath::bf16) {
    auto const start = std::chrono::steady_clock::now();
    w1_repacked = moe::repack_mxfp4(w.w1_codes);
    w2_repacked = moe::repack_mxfp4(w.w2_codes);
    if (moe::wgmma_tiles_possible(shape, moe::WgmmaMatrix::w1))
      w1_tiles = moe::make_wgmma_tiles(shape, moe::WgmmaMatrix::w1, w.w1_codes, w.w1_scales);
    if (moe::wgmma_tiles_possible(shape, moe::WgmmaMatrix::w2))
      w2_tiles = moe::make_wgmma_tiles(shape, moe::WgmmaMatrix::w2, w.w2_codes, w.w2_scales);
    if (shape.dtype == moe::DtypePath::a8w4) {
      auto constexpr words = moe::DtypePath::a16w4;
      if (moe::wgmma_tiles_possible(shape, moe::WgmmaMatrix::w1))
        w1_tiles_a16w4 = moe::make_wgmma_tiles(shape, moe::WgmmaMatrix::w1, words, w.w1_codes, w.w1_scales).codes;
      if (moe::wgmma_tiles_possible(shape, moe::WgmmaMatrix::w2))
        w2_tiles_a16w4 = moe::make_wgmma_tiles(shape, moe::WgmmaMatrix::w2, words, w.w2_codes, w.w2_scales).codes;
    }
    m_repack_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  for (int c = 0; c < copies; ++c) {
    WeightCopy copy;
    if (shape.dtype == moe::DtypePath::bf16) {
      copy.w1 = upload_new(device, w.w1_bf16);
      copy.w2 = upload_new(device, w.w2_bf16);
    } else {
      copy.w1 = upload_new(device, w.w1_codes);
      copy.w1_scales = upload_new(device, w.w1_scales);
      copy.w2 = upload_new(device, w.w2_codes);
      copy.w2_scales = upload_new(device, w.w2_scales);
      copy.w1_repacked = upload_new(device, w1_repacked);
      copy.w2_repacked = upload_new(device, w2_repacked);
      copy.w1_tiles = upload_new(device, w1_tiles.codes);
      copy.w1_tile_scales = upload_new(device, w1_tiles.scales);
      copy.w2_tiles = upload_new(device, w2_tiles.codes);
      copy.w2_tile_scales = upload_new(device, w2_tiles.scales);
      copy.w1_tiles_a16w4 = upload_new(device, w1_tiles_a16w4);
      copy.w2_tiles_a16w4 = upload_new(device, w2_tiles_a16w4);
    }
    if (copy.w1.empty() || copy.w2.empty()) {
      throw Error(fmt::format("DeviceWeights: no {} weights in the workload",
                              moe::to_string(shape.dtype)));
    }
    m_copies.push_back(std::move(copy));
  }
}

DeviceWeights::DeviceWeights(const gpu::Device& device, const DeviceWeights& source, int copies) {
  if (copies < 1) throw Error("DeviceWeights: at least one weight copy is needed");
  auto const& from = source.copy(0);
  auto clone = [&](const gpu::DeviceBuffer& b) {
    if (b.empty()) return gpu::DeviceBuffer();
    gpu::DeviceBuffer out(device, b.size());
    out.copy_from(b);
    return out;
  };
  for (int c = 0; c < copies; ++c) {
    WeightCopy copy;
    for (auto const member : WeightCopy::buffers) copy.*member = clone(from.*member);
    m_copies.push_back(std::move(copy));
  }
}

std::vector<const gpu::DeviceBuffer*> WeightCopy::all() const {
  std::vector<const gpu::DeviceBuffer*> out;
  for (auto const member : buffers) out.push_back(&(this->*member));
  return out;
}

WeightView weight_view(const WeightCopy& w, int stage, search::WeightLayout layout) {
  bool const s1 = stage == 1;
  switch (layout) {
    case search::WeightLayout::natural: break;
    case search::WeightLayout::repacked: return {s1 ? w.w1_repacked : w.w2_repacked, s1 ? w.w1_scales : w.w2_scales};
    case search::WeightLayout::wgmma_tiles: {
      auto const& codes = s1 ? w.w1_tiles : w.w2_tiles;
      if (codes.empty())
        throw Error(fmt::format("the stage-{} weights have no wgmma tile layout (K not a multiple of 64, or bf16)", stage));
      return {codes, s1 ? w.w1_tile_scales : w.w2_tile_scales};
    }
    case search::WeightLayout::wgmma_tiles_a16w4: {
      auto const& codes = s1 ? w.w1_tiles_a16w4 : w.w2_tiles_a16w4;
      if (codes.empty())
        throw Error(fmt::format("the stage-{} weights have no wgmma tiles in A16W4 words (only A8W4 weights whose K is "
                                "a multiple of 64 have them)",
                                stage));
      return {codes, s1 ? w.w1_tile_scales : w.w2_tile_scales};
    }
  }
  return {s1 ? w.w1 : w.w2, s1 ? w.w1_scales : w.w2_scales};
}

const WeightCopy& DeviceWeights::copy(int index) const {
  return m_copies[static_cast<std::size_t>(index) % m_copies.size()];
}

std::size_t DeviceWeights::bytes_per_copy() const {
  std::size_t bytes = 0;
  for (auto const* b : m_copies.front().all()) bytes += b->size();
  return bytes;
}

std::string DeviceWeights::digest() const {
  FastHash64 hash;
  for (auto const& w : m_copies)
    for (auto const* b : w.all()) hash_buffer(hash, *b);
  return fmt::format("{:016x}", hash.value());
}

int cold_weight_copies(const gpu::Device& device, const moe::MoeShape& shape,
                       const moe::Routing& routing, std::size_t bytes_per_copy, bool hot) {
  if (hot) return 1;
  double const touched = moe::moe_traffic(shape, moe::count_experts_touched(routing)).weight_bytes;
  double const want = 4.0 * static_cast<double>(device.info().l2_bytes) / std::max(touched, 1.0);
  auto const budget = device.memory_info().free_bytes / 3 / std::max<std::size_t>(bytes_per_copy, 1);
  return static_cast<int>(std::clamp<double>(std::ceil(want), 1.0,
                                             std::max<double>(1.0, static_cast<double>(budget))));
}

DeviceInputs::DeviceInputs(const gpu::Device& device, const moe::MoeShape& shape,
                           const moe::Activations& x, const moe::Routing& routing)
    : m_dtype(shape.dtype), m_tokens(shape.tokens) {
  if (routing.tokens != shape.tokens || routing.topk != shape.topk) {
    throw Error(fmt::format("DeviceInputs: routing for M={} topk={} given for M={} topk={}",
                            routing.tokens, routing.topk, shape.tokens, shape.topk));
  }
  m_x = m_dtype == moe::DtypePath::a8w4 ? upload_new(device, x.x_codes) : upload_new(device, x.x_bf16);
  m_x_scales = upload_new(device, x.x_scales);
  m_topk_ids = upload_new(device, routing.ids);
  m_topk_weights = upload_new(device, routing.weights);
  if (m_x.empty()) throw Error("DeviceInputs: the activations do not match the data path");
}

void DeviceInputs::upload_activations(const moe::Activations& x) {
  if (m_dtype == moe::DtypePath::a8w4) {
    upload_same_size(m_x, x.x_codes, "x codes");
    upload_same_size(m_x_scales, x.x_scales, "x scales");
  } else {
    upload_same_size(m_x, x.x_bf16, "x");
  }
}

void DeviceInputs::upload_routing(const moe::Routing& routing) {
  upload_same_size(m_topk_ids, routing.ids, "topk_ids");
  upload_same_size(m_topk_weights, routing.weights, "topk_weights");
}

std::string DeviceInputs::digest() const {
  FastHash64 hash;
  hash_buffer(hash, m_x);
  hash_buffer(hash, m_x_scales);
  hash_buffer(hash, m_topk_ids);
  hash_buffer(hash, m_topk_weights);
  return fmt::format("{:016x}", hash.value());
}

}  // namespace moetune::exec
