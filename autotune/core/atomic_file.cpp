#include "autotune/core/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autotune/core/error.hpp"

namespace moetune {

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw FileError(path, "read", "it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "open for reading", std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw FileError(path, "read", std::strerror(errno));
  return std::move(buffer).str();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  auto const dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string temp = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) throw FileError(path, "create a temporary file beside", std::strerror(errno));
  auto fail = [&](const char* action) {
    int const err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    throw FileError(path, action, std::strerror(err));
  };
  std::size_t done = 0;
  while (done < contents.size()) {
    auto const n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("flush");
  // mkstemp creates 0600; published tables should have the usual permissions.
  mode_t const mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    int const err = errno;
    ::unlink(temp.c_str());
    throw FileError(path, "close", std::strerror(err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int const err = errno;
    ::unlink(temp.c_str());
    throw FileError(path, "rename into place", std::strerror(err));
  }
}

}  // namespace moetune
