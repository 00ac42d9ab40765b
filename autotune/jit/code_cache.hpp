#pragma once
// The on-disk cache of compiled code objects. A cold search over a few hundred variants is
// minutes of compiling; a warm one is a few file reads.
//
// Key: SHA-256 over the unit's source, every header's name and text, the compiler's complete
// option list (defines included), the arch, the requested kernel names and the compiler's
// identity and version. Anything that can change the code object changes the key, so entries
// are never invalidated, only superseded.
//
// Entry: <dir>/<arch>/<key[0,2)>/<key>.bin holding the image, lowered names, resource figures
// and the log, behind a SHA-256 checksum of the payload. Entries are written to a temporary
// name and renamed into place, so readers (other threads, other processes) see a whole entry
// or none. A corrupt or truncated entry is reported at debug level, removed and rebuilt.
#include <filesystem>
#include <optional>
#include <string>

#include "autotune/jit/compile_result.hpp"
#include "autotune/jit/compiler.hpp"

namespace moetune::jit {

// $XDG_CACHE_HOME/moe-tune, else ~/.cache/moe-tune, else <tmp>/moe-tune-cache.
[[nodiscard]] std::filesystem::path default_cache_dir();

// The cache key of `source` compiled by `compiler` (64 hex digits).
[[nodiscard]] std::string cache_key(const Compiler& compiler, const KernelSource& source);

class CodeCache {
 public:
  explicit CodeCache(std::filesystem::path dir);

  // The entry for `key`, or nullopt on a miss. A damaged entry counts as a miss and is deleted.
  [[nodiscard]] std::optional<CompileResult> load(const std::string& key,
                                                  const std::string& arch) const;
  // Publishes a successful result (failed compiles are not cached: they are cheap to
  // reproduce and may depend on a fixed tool chain). Throws FileError if it cannot write.
  void store(const std::string& key, const std::string& arch, const std::string& unit_name,
             const CompileResult& result) const;

  [[nodiscard]] std::filesystem::path entry_path(const std::string& key,
                                                 const std::string& arch) const;
  [[nodiscard]] const std::filesystem::path& dir() const { return m_dir; }

 private:
  std::filesystem::path m_dir;
};

}  // namespace moetune::jit
