#pragma once
// A fixed set of worker threads that share an index range: parallel_for(count, jobs, fn) calls
// fn(i) exactly once for every i in [0, count), on at most `jobs` threads, and returns when all
// are done. Work is handed out one index at a time, so a slow item (a big kernel) never holds
// up the others behind it. The compile pool is built on this; nothing here knows about GPUs.
#include <cstddef>
#include <functional>

namespace moetune {

// jobs == 0 means std::thread::hardware_concurrency(). If fn throws, the remaining indices are
// not started and the first exception is rethrown on the calling thread once all workers stop.
// (Callers that want every item to finish catch inside fn and record the outcome.)
void parallel_for(std::size_t count, unsigned jobs, const std::function<void(std::size_t)>& fn);

// The number of workers parallel_for would use for `jobs`.
[[nodiscard]] unsigned effective_jobs(unsigned jobs);

}  // namespace moetune
