// `moe-tune device`: what GPU this process would tune on, or why there is none.
#include <cstdio>

#include <fmt/format.h>

#include "apps/moe-tune/commands.hpp"
#include "autotune/gpu/availability.hpp"
#include "autotune/gpu/gpu.hpp"

namespace moetune::app {

void add_device_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("device", "Show the GPU moe-tune would use, or why none");
  cmd->callback([&exit_code] {
    auto const probe = gpu::probe_gpu();
    if (!probe.available) {
      fmt::print("no usable GPU: {}\n", probe.reason);
      exit_code = 1;
      return;
    }
    gpu::Device device(0);
    auto const& d = device.info();
    fmt::print("device {}: {} ({}, {})\n", d.ordinal, d.name, d.arch, gpu::to_string(d.vendor));
    fmt::print("  compute units {}, wave size {}, L2 {:.1f} MiB, memory {:.1f} GiB\n",
               d.compute_units, d.wave_size, d.l2_bytes / 1048576.0,
               d.global_memory_bytes / 1073741824.0);
    fmt::print("  shared memory per block {} B (opt-in {} B), SM clock {} MHz\n",
               d.shared_memory_per_block_bytes, d.shared_memory_per_block_optin_bytes,
               d.sm_clock_khz / 1000);
    fmt::print("  driver {}, runtime {}, PCI {}\n", d.driver_version, d.runtime_version,
               d.pci_bus_id);
    exit_code = 0;
  });
}

}  // namespace moetune::app
