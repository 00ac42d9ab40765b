#pragma once
// Several measuring workers at once (`tune`, `calibrate` and `requalify` with `--devices`):
// one Sampler per device (the isolated worker of one GPU, or a replay) and the scheduler that
// hands them independent pieces of work, so each piece is measured wholly on one device and no
// two devices share one.
#include <cstddef>
#include <functional>
#include <span>
#include <string>

#include "autotune/measure/sampler.hpp"

namespace moetune::tune {

// One measuring worker: its own sampler and the name reports give the device.
struct DeviceWorker {
  measure::Sampler* sampler = nullptr;
  std::string device;  // "gpu 0 (NVIDIA H200, 0000:19:00.0)", "replay worker 1"
};

// Runs `task(order[i], worker)` for every i, each on one of `workers` threads (worker is its
// index): the next task in `order` goes to whichever worker is free. The first exception a
// task throws stops the handing out (tasks already running finish) and is rethrown once every
// thread has ended. With one worker the tasks run in order on the calling thread. The tasks
// share nothing through this function: whatever they write in common, they lock themselves.
void run_on_workers(std::span<const std::size_t> order, std::size_t workers,
                    const std::function<void(std::size_t task, std::size_t worker)>& task);

}  // namespace moetune::tune
