#include "apps/moe-tune/repository_paths.hpp"

namespace moetune::app {

std::filesystem::path locate(const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative() && !std::filesystem::exists(p)) {
    auto const in_source = std::filesystem::path(MOETUNE_SOURCE_DIR) / p;
    if (std::filesystem::exists(in_source)) return in_source;
  }
  return p;
}

}  // namespace moetune::app
