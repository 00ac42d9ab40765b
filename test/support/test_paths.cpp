#include "test/support/test_paths.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace moetune::test {

std::filesystem::path source_dir() { return MOETUNE_SOURCE_DIR; }

std::filesystem::path aiter_data_dir() {
  return std::filesystem::path(MOETUNE_SHARED_DIR) / "aiter-data";
}

std::filesystem::path scratch_dir(const char* test_name) {
  static std::atomic<int> counter{0};
  auto const dir = std::filesystem::temp_directory_path() /
                   ("moetune-test-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter++) + "-" + test_name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace moetune::test
