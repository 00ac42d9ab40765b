#pragma once
// `--devices all|0,1,...` for every command that measures (tune, calibrate, requalify): which
// GPUs of this host, one isolated worker process each (`moe-tune worker --device K` behind its
// watchdog), refused when the GPUs differ in model, SM count or clocks unless
// --mixed-devices; with --replay the ordinals name replay workers. One definition, so the flag
// means the same in each command.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/moe-tune/isolation_options.hpp"
#include "apps/moe-tune/measurement_options.hpp"
#include "autotune/gpu/gpu.hpp"
#include "autotune/measure/gpu_sampler.hpp"
#include "autotune/measure/replay_sampler.hpp"
#include "autotune/search/arch.hpp"
#include "autotune/tune/device_workers.hpp"

namespace moetune::app {

struct DeviceOptions {
  std::string devices;         // "all" or "0,1,...": empty = GPU 0 alone, the usual path
  bool mixed_devices = false;  // allow GPUs of different models or clocks in one run

  [[nodiscard]] bool several() const { return !devices.empty(); }
  // --devices and --mixed-devices; `what` says what each worker takes ("buckets", "trials").
  void add_device_options(CLI::App& cmd, const std::string& what);
};

// The ordinals `--devices` names: "all" (every GPU: `count` of them), else distinct
// non-negative ordinals separated by commas, each below `count` when count >= 0 (a replay has
// no GPUs to count: its "devices" are worker labels). A usage error names the text.
[[nodiscard]] std::vector<int> parse_devices(const std::string& text, int count);

// GPUs that time one run must be alike, or a verdict would depend on where it ran: the same
// model, SM count and clocks. Throws naming both GPUs.
void check_devices_alike(const std::vector<gpu::DeviceInfo>& infos);

// The workers and the samplers they own.
struct DeviceWorkers {
  std::vector<std::unique_ptr<measure::Sampler>> samplers;
  std::vector<tune::DeviceWorker> workers;

  // One unnamed worker: a run without --devices.
  [[nodiscard]] static DeviceWorkers one(std::unique_ptr<measure::Sampler> sampler);
  // The workers' device names, in order (for the run's log and report).
  [[nodiscard]] std::vector<std::string> names() const;
};

// The arguments of a GPU worker process for these measurement settings (its --device added
// per worker).
[[nodiscard]] std::vector<std::string> gpu_worker_args(search::Arch arch,
                                                       const MeasurementOptions& measurement);

// The arguments of a worker process that replays `model_path`.
[[nodiscard]] std::vector<std::string> replay_worker_args(const std::filesystem::path& model_path);

// The options of a sampler that times in this process (--no-isolate): the measurement
// settings and any TEST ONLY faults.
[[nodiscard]] measure::GpuSamplerOptions in_process_sampler_options(const MeasurementOptions& measurement,
                                                                    const IsolationOptions& isolation);

// One isolated worker per GPU named by `options` (`device_count` GPUs on the host, as probed;
// `primary` is the caller's open GPU 0, whose info is reused): refuses --no-isolate, and
// unlike GPUs unless --mixed-devices.
[[nodiscard]] DeviceWorkers gpu_workers(const DeviceOptions& options, int device_count,
                                        const gpu::Device& primary,
                                        const IsolationOptions& isolation,
                                        const std::vector<std::string>& worker_args);

// Replay workers labelled by the ordinals: each replays `model` in this process, or in a
// worker process of its own with --isolate.
[[nodiscard]] DeviceWorkers replay_workers(const DeviceOptions& options,
                                           const IsolationOptions& isolation,
                                           const std::filesystem::path& model_path,
                                           const measure::ReplayModel& model);

}  // namespace moetune::app
