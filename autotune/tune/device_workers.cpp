#include "autotune/tune/device_workers.hpp"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "autotune/core/error.hpp"

namespace moetune::tune {

void run_on_workers(std::span<const std::size_t> order, std::size_t workers,
                    const std::function<void(std::size_t task, std::size_t worker)>& task) {
  if (workers == 0) throw Error("run_on_workers: no measuring worker");
  if (workers == 1) {
    for (auto const i : order) task(i, 0);
    return;
  }
  std::mutex lock;  // the queue and the first failure
  std::size_t next = 0;
  std::exception_ptr failure;
  auto work = [&](std::size_t worker) {
    for (;;) {
      std::size_t i = 0;
      {
        std::lock_guard<std::mutex> guard(lock);
        if (failure || next == order.size()) return;
        i = order[next++];
      }
      try {
        task(i, worker);
      } catch (...) {
        std::lock_guard<std::mutex> guard(lock);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    threads.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w) threads.emplace_back(work, w);
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace moetune::tune
