#include "autotune/runtime/prepared_weights.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/moe/mxfp4_repack.hpp"

namespace moetune::runtime {
namespace {

// A DeepSeek layer's w1 codes are over a gigabyte: repack through a bounded host buffer.
constexpr std::size_t repack_chunk_bytes = std::size_t{64} << 20;  // a multiple of 4

gpu::DeviceBuffer repacked_copy(const gpu::Device& device, const void* natural, std::size_t bytes) {
  gpu::DeviceBuffer out(device, bytes);
  std::vector<std::byte> host(std::min(bytes, repack_chunk_bytes));
  for (std::size_t offset = 0; offset < bytes; offset += repack_chunk_bytes) {
    std::span<std::byte> const part(host.data(), std::min(repack_chunk_bytes, bytes - offset));
    gpu::copy_device_to_host(device, static_cast<const std::byte*>(natural) + offset, part);
    auto const repacked = moe::repack_mxfp4(std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(part.data()), part.size()));
    out.upload(std::as_bytes(std::span<const std::uint8_t>(repacked)), offset);
  }
  return out;
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
                                 const LayerWeights& caller, bool repack_w1, bool repack_w2)
    : m_caller(caller) {
  if ((repack_w1 || repack_w2) && shape.dtype == moe::DtypePath::bf16) {
    throw Error("bf16 weights have no repacked layout");
  }
  auto const start = std::chrono::steady_clock::now();
  if (repack_w1) m_w1_repacked = repacked_copy(device, caller.w1, w1_bytes(shape));
  if (repack_w2) m_w2_repacked = repacked_copy(device, caller.w2, w2_bytes(shape));
  m_repack_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const void* PreparedWeights::w1(bool repacked) const {
  return repacked ? m_w1_repacked.data() : m_caller.w1;
}

const void* PreparedWeights::w2(bool repacked) const {
  return repacked ? m_w2_repacked.data() : m_caller.w2;
}

}  // namespace moetune::runtime
