#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "autotune/core/thread_pool.hpp"

TEST_CASE("parallel_for visits every index exactly once", "[core][thread_pool]") {
  for (unsigned jobs : {1U, 2U, 7U, 0U}) {
    std::vector<std::atomic<int>> visits(1000);
    moetune::parallel_for(visits.size(), jobs, [&](std::size_t i) { ++visits[i]; });
    for (auto const& v : visits) REQUIRE(v.load() == 1);
  }
  moetune::parallel_for(0, 4, [](std::size_t) { FAIL("called for an empty range"); });
}

TEST_CASE("parallel_for rethrows the first exception on the caller", "[core][thread_pool]") {
  CHECK_THROWS_WITH(moetune::parallel_for(100, 3,
                                          [](std::size_t i) {
                                            if (i == 17) throw std::runtime_error("item 17");
                                          }),
                    "item 17");
  CHECK(moetune::effective_jobs(0) >= 1);
  CHECK(moetune::effective_jobs(5) == 5);
}
