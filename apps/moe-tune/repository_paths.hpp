#pragma once
// Defaults of the subcommands name files of the repository (shapes/, search_spaces/, test
// models); these let them work from any directory.
#include <filesystem>
#include <string>

namespace moetune::app {

// `path` itself if it exists or is absolute; else the same relative path under the source
// tree the binary was built from, if that exists; else `path` unchanged (its open then fails
// with the name the user gave).
[[nodiscard]] std::filesystem::path locate(const std::string& path);

}  // namespace moetune::app
