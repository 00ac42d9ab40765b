#pragma once
// Files are published whole or not at all: written to a temporary name in the same directory,
// flushed to disk, then renamed over the target. A crash or a full disk never leaves a
// half-written table where a good one was.
#include <filesystem>
#include <string>
#include <string_view>

namespace moetune {

// Reads a whole file; throws FileError naming the file if it cannot.
[[nodiscard]] std::string read_file(const std::filesystem::path& path);

// Writes `contents` to `path` atomically (temporary file + fsync + rename). Throws FileError
// naming the target; on failure the previous file, if any, is untouched.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace moetune
