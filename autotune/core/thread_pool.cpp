#include "autotune/core/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace moetune {

unsigned effective_jobs(unsigned jobs) {
  if (jobs > 0) return jobs;
  return std::max(1U, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t count, unsigned jobs, const std::function<void(std::size_t)>& fn) {
  if (count == 0) return;
  std::size_t const workers = std::min<std::size_t>(effective_jobs(jobs), count);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;

  auto const work = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      std::size_t const index = next.fetch_add(1, std::memory_order_relaxed);
      if (index >= count) return;
      try {
        fn(index);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };

  if (workers == 1) {
    work();  // no thread for the serial case: easier to debug, same semantics
  } else {
    std::vector<std::jthread> threads;
    threads.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) threads.emplace_back(work);
  }  // jthreads join here
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace moetune
