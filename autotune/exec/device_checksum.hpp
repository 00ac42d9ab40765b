#pragma once
// Checksums of device buffers computed on the device (kernels/moe_checksum.cuh), for the
// verifier's input-preservation gate: proving that a candidate left ~2 GB of weights intact
// costs a millisecond instead of a download and a host hash per candidate.
#include <cstdint>
#include <optional>
#include <vector>

#include "autotune/gpu/gpu.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "autotune/jit/compiler.hpp"

namespace moetune::exec {

class DeviceChecksum {
 public:
  // Compiles the one-kernel unit with `compiler` (outside the code cache: well under a
  // second) and loads it. Throws moetune::Error if it does not compile.
  DeviceChecksum(const gpu::Device& device, const jit::Compiler& compiler);

  // Checksum of the buffers' bytes, in order (each buffer's position enters the result).
  [[nodiscard]] std::uint64_t of(const std::vector<const gpu::DeviceBuffer*>& buffers) const;

 private:
  const gpu::Device* m_device;
  jit::CompileOutcome m_unit;
  std::optional<gpu::Module> m_module;
  std::optional<gpu::Kernel> m_kernel;
  mutable gpu::DeviceBuffer m_result;  // scratch for the sum: reset and read per call
};

}  // namespace moetune::exec
