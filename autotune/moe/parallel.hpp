#pragma once
// A minimal parallel loop for the host-side bulk work (filling a DeepSeek layer's ~4e9
// weights, the reference's per-expert GEMVs). Results must not depend on the thread count,
// so callers give each index its own output and its own random stream; this only hands out
// indices.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace moetune::moe {

// 0 means one thread per hardware thread.
[[nodiscard]] inline unsigned resolve_threads(unsigned requested) {
  if (requested != 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Calls fn(i) for every i in [0, count), on up to `threads` threads, handing indices out one
// at a time (the work per index is uneven: experts differ in load). The first exception thrown
// by fn is rethrown here after all threads have stopped.
template <typename Fn>
void parallel_for(std::int64_t count, unsigned threads, Fn&& fn) {
  unsigned const workers =
      static_cast<unsigned>(std::min<std::int64_t>(resolve_threads(threads), std::max<std::int64_t>(count, 1)));
  if (workers <= 1) {
    for (std::int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto const work = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      std::int64_t const i = next.fetch_add(1);
      if (i >= count) return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (unsigned t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace moetune::moe
