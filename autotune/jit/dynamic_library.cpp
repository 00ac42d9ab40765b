#include "autotune/jit/dynamic_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <link.h>

#include <filesystem>
#include <system_error>

#include "autotune/core/error.hpp"

namespace moetune::jit {

DynamicLibrary::DynamicLibrary(const std::vector<std::string>& candidates, std::string what) {
  std::string attempts;
  for (auto const& candidate : candidates) {
    m_handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (m_handle != nullptr) {
      m_path = candidate;
      return;
    }
    char const* why = ::dlerror();
    attempts += fmt::format("\n  {}: {}", candidate, why != nullptr ? why : "not loadable");
  }
  throw Error(fmt::format("{} is not available; tried:{}", what, attempts));
}

void* DynamicLibrary::symbol(const char* name) const {
  void* address = ::dlsym(m_handle, name);
  if (address == nullptr) {
    throw Error(fmt::format("{} has no symbol {}", m_path, name));
  }
  return address;
}

std::string DynamicLibrary::resolved_file() const {
  const link_map* map = nullptr;
  if (::dlinfo(m_handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return m_path;
  }
  std::error_code error;
  auto const real = std::filesystem::canonical(map->l_name, error);
  return error ? std::string(map->l_name) : real.filename().string();
}

}  // namespace moetune::jit
