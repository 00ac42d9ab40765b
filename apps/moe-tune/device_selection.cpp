#include "apps/moe-tune/device_selection.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/measure/test_fault.hpp"
#include "autotune/moe/routing.hpp"

namespace moetune::app {

void DeviceOptions::add_device_options(CLI::App& cmd, const std::string& what) {
  cmd.add_option("--devices", devices,
                 fmt::format("Measure on several GPUs of this host: 'all' or ordinals like 0,1. "
                             "One isolated worker per GPU; the {} go to whichever is free, each "
                             "measured wholly on one GPU. GPUs of different models, SM counts or "
                             "clocks are refused unless --mixed-devices. With --replay: worker "
                             "labels",
                             what));
  cmd.add_flag("--mixed-devices", mixed_devices,
               "With --devices: allow GPUs of different models, SM counts or clocks");
}

std::vector<int> parse_devices(const std::string& text, int count) {
  std::vector<int> out;
  if (text == "all") {
    if (count < 0) throw CLI::ValidationError("--devices", "'all' counts GPUs; a replay names its workers: 0,1,...");
    for (int i = 0; i < count; ++i) out.push_back(i);
    if (out.empty()) throw CLI::ValidationError("--devices", "all: no GPU found");
    return out;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    auto const end = std::min(text.find(',', start), text.size());
    auto const item = text.substr(start, end - start);
    int v = -1;
    auto const [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 0)
      throw CLI::ValidationError("--devices", fmt::format("'{}': expected 'all' or GPU ordinals like 0,1 ('{}' is not one)", text, item));
    if (count >= 0 && v >= count)
      throw CLI::ValidationError("--devices", fmt::format("'{}': GPU {} does not exist ({} found)", text, v, count));
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw CLI::ValidationError("--devices", fmt::format("'{}': GPU {} named twice", text, v));
    out.push_back(v);
    start = end + 1;
  }
  return out;
}

void check_devices_alike(const std::vector<gpu::DeviceInfo>& infos) {
  for (auto const& i : infos) {
    auto const& f = infos.front();
    if (i.name != f.name || i.compute_units != f.compute_units || i.sm_clock_khz != f.sm_clock_khz ||
        i.memory_clock_khz != f.memory_clock_khz) {
      throw Error(fmt::format("--devices: GPU {} ({}, {} SMs, {} / {} MHz) differs from GPU {} ({}, {} SMs, {} / {} "
                              "MHz); a verdict would depend on where it ran. Name alike GPUs, or pass "
                              "--mixed-devices to measure on both anyway",
                              i.ordinal, i.name, i.compute_units, i.sm_clock_khz / 1000, i.memory_clock_khz / 1000,
                              f.ordinal, f.name, f.compute_units, f.sm_clock_khz / 1000, f.memory_clock_khz / 1000));
    }
  }
}

DeviceWorkers DeviceWorkers::one(std::unique_ptr<measure::Sampler> sampler) {
  DeviceWorkers out;
  out.samplers.push_back(std::move(sampler));
  out.workers.push_back({out.samplers.back().get(), ""});
  return out;
}

std::vector<std::string> DeviceWorkers::names() const {
  std::vector<std::string> out;
  for (auto const& w : workers) out.push_back(w.device);
  return out;
}

std::vector<std::string> replay_worker_args(const std::filesystem::path& model_path) {
  return {"--backend", "replay", "--replay", model_path.string()};
}

std::vector<std::string> gpu_worker_args(search::Arch arch, const MeasurementOptions& m) {
  std::vector<std::string> args{"--backend", "gpu", "--arch", std::string(search::to_string(arch)),
                                "--routing", m.routing, "--seed", std::to_string(m.seed)};
  if (m.hot) args.push_back("--hot");
  if (!m.cache_dir.empty()) args.insert(args.end(), {"--cache-dir", m.cache_dir});
  return args;
}

measure::GpuSamplerOptions in_process_sampler_options(const MeasurementOptions& m,
                                                      const IsolationOptions& isolation) {
  measure::GpuSamplerOptions so;
  so.hot = m.hot;
  so.routing = moe::parse_routing_spec(m.routing);
  so.weight_seed = m.seed;
  if (!isolation.test_fault.empty()) so.test_faults = measure::parse_test_faults(isolation.test_fault);
  return so;
}

DeviceWorkers gpu_workers(const DeviceOptions& options, int device_count, const gpu::Device& primary,
                          const IsolationOptions& isolation, const std::vector<std::string>& worker_args) {
  auto const ordinals = parse_devices(options.devices, device_count);
  if (!isolation.isolated(true))
    throw CLI::ValidationError("--devices", "each GPU is timed by its own worker process: drop --no-isolate");
  std::vector<gpu::DeviceInfo> infos;
  for (int const k : ordinals) infos.push_back(k == primary.ordinal() ? primary.info() : gpu::Device(k).info());
  if (!options.mixed_devices) check_devices_alike(infos);
  DeviceWorkers out;
  for (auto const& info : infos) {
    auto args = worker_args;
    args.insert(args.end(), {"--device", std::to_string(info.ordinal)});
    out.samplers.push_back(isolated_sampler(isolation, std::move(args)));
    out.workers.push_back({out.samplers.back().get(), fmt::format("gpu {} ({}, {})", info.ordinal, info.name, info.pci_bus_id)});
  }
  return out;
}

DeviceWorkers replay_workers(const DeviceOptions& options, const IsolationOptions& isolation,
                             const std::filesystem::path& model_path, const measure::ReplayModel& model) {
  // Each piece's samples come from its own stream, so which worker replays it does not change
  // its verdict.
  DeviceWorkers out;
  for (int const k : parse_devices(options.devices, -1)) {
    if (isolation.isolated(false))
      out.samplers.push_back(isolated_sampler(isolation, replay_worker_args(model_path)));
    else
      out.samplers.push_back(std::make_unique<measure::ReplaySampler>(model));
    out.workers.push_back({out.samplers.back().get(), fmt::format("replay worker {}", k)});
  }
  return out;
}

}  // namespace moetune::app
