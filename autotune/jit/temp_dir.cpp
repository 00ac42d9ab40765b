#include "autotune/jit/temp_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <string>
#include <system_error>

#include "autotune/core/error.hpp"

namespace moetune::jit {

TempDir::TempDir(std::string_view prefix) {
  // mkdtemp: unique even when many pool threads create directories at once.
  std::string pattern =
      (std::filesystem::temp_directory_path() / fmt::format("{}-XXXXXX", prefix)).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw FileError(pattern, "create a temporary directory", std::strerror(errno));
  }
  m_path = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(m_path, ignored);
}

void write_scratch_file(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw FileError(path, "write", std::strerror(errno));
}

void write_scratch_file(const std::filesystem::path& path, std::string_view text) {
  write_scratch_file(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

}  // namespace moetune::jit
