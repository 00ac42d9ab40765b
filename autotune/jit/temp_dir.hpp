#pragma once
// A fresh private directory, removed with everything in it on destruction: the offline
// compiler's sources, headers and outputs for one unit.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>

namespace moetune::jit {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

// Writes bytes to a scratch file (no fsync: scratch files are disposable). Throws FileError.
void write_scratch_file(const std::filesystem::path& path, std::span<const std::byte> bytes);
void write_scratch_file(const std::filesystem::path& path, std::string_view text);

}  // namespace moetune::jit
