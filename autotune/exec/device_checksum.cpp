#include "autotune/exec/device_checksum.hpp"

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/core/fast_hash.hpp"

namespace moetune::exec {
namespace {

constexpr const char* checksum_kernel = "moetune::moe_checksum";
constexpr std::uint32_t checksum_threads = 256;  // kernels/moe_checksum.cuh
constexpr std::int32_t checksum_grid = 1024;

jit::KernelSource checksum_source() {
  return jit::single_kernel_unit("moetune_checksum", "verify: device-side checksum of the weights",
                                 "moe_checksum.cuh", checksum_kernel);
}

}  // namespace

DeviceChecksum::DeviceChecksum(const gpu::Device& device, const jit::Compiler& compiler)
    : m_device(&device),
      m_unit(jit::compile_unit(compiler, nullptr, checksum_source())),
      m_result(device, sizeof(std::uint64_t)) {
  if (m_unit.status != jit::CompileStatus::ok || m_unit.result.kernels.empty()) {
    throw Error(fmt::format("the checksum kernel did not compile: {}", m_unit.result.log));
  }
  m_module.emplace(device, m_unit.result.image);
  m_kernel.emplace(m_module->function(m_unit.result.kernels.front().lowered_name));
}

std::uint64_t DeviceChecksum::of(const std::vector<const gpu::DeviceBuffer*>& buffers) const {
  gpu::Stream stream(*m_device);
  FastHash64 combined;
  for (auto const* buffer : buffers) {
    std::uint64_t sum = 0;
    m_result.upload(std::as_bytes(std::span(&sum, 1)));
    auto const whole = static_cast<std::int64_t>(buffer->size() / 16);
    if (whole > 0) {
      void* data = buffer->data();
      std::int64_t n16 = whole;
      std::int32_t grid = checksum_grid;
      void* out = m_result.data();
      void* args[] = {&data, &n16, &grid, &out};
      m_kernel->launch(gpu::Dim3{static_cast<std::uint32_t>(grid), 1, 1},
                       gpu::Dim3{checksum_threads, 1, 1}, 0, stream, args);
      stream.synchronize();
      m_result.download(std::as_writable_bytes(std::span(&sum, 1)));
    }
    // The tail (under 16 bytes) and the size, hashed on the host.
    std::array<std::byte, 16> tail{};
    auto const tail_bytes = buffer->size() % 16;
    if (tail_bytes > 0) buffer->download(std::span(tail.data(), tail_bytes), buffer->size() - tail_bytes);
    std::uint64_t const head[2] = {sum, static_cast<std::uint64_t>(buffer->size())};
    combined.update(std::as_bytes(std::span(head)));
    combined.update(std::span<const std::byte>(tail.data(), tail_bytes));
  }
  return combined.value();
}

}  // namespace moetune::exec
