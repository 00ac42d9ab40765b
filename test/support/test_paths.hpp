#pragma once
// Where tests find the project's files and the shared AITER data beside the checkout.
#include <filesystem>

namespace moetune::test {

[[nodiscard]] std::filesystem::path source_dir();
// ../shared/aiter-data: the real AITER tables every reader must accept.
[[nodiscard]] std::filesystem::path aiter_data_dir();
// A fresh, empty directory for one test's files under the system temporary directory.
[[nodiscard]] std::filesystem::path scratch_dir(const char* test_name);

}  // namespace moetune::test
