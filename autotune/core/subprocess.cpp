#include "autotune/core/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <sstream>

#include "autotune/core/error.hpp"

extern char** environ;

namespace moetune {
namespace {

// Closes a descriptor on every exit path.
class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  void reset() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }
  [[nodiscard]] int get() const { return m_fd; }

 private:
  int m_fd;
};

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  for (auto const& arg : argv) {
    if (!text.empty()) text += ' ';
    text += arg;
  }
  return text;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& working_dir) {
  if (argv.empty()) throw Error("run_process: empty command");
  std::array<int, 2> fds{};
  // O_CLOEXEC: a child spawned concurrently by another thread must not inherit our pipe, or
  // our read would not see end-of-file until that unrelated child exits.
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot create a pipe for '{}': {}", argv[0], std::strerror(errno)));
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!working_dir.empty()) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
    posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
#else
#error "run_process needs posix_spawn_file_actions_addchdir_np (glibc 2.29+)"
#endif
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (auto const& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  int const rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw Error(fmt::format("cannot run '{}': {}", command_text(argv), std::strerror(rc)));
  }
  write_end.reset();  // so that read() sees end-of-file when the child exits

  ProcessResult result;
  std::array<char, 4096> buffer{};
  for (;;) {
    ssize_t const n = ::read(read_end.get(), buffer.data(), buffer.size());
    if (n > 0) {
      result.output.append(buffer.data(), static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

std::optional<std::filesystem::path> find_program(
    const std::string& name, const std::vector<std::filesystem::path>& extra_dirs) {
  auto const executable = [](const std::filesystem::path& path) {
    return ::access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path);
  };
  if (name.find('/') != std::string::npos) {
    return executable(name) ? std::optional<std::filesystem::path>(name) : std::nullopt;
  }
  for (auto const& dir : extra_dirs) {
    if (executable(dir / name)) return dir / name;
  }
  char const* path_env = std::getenv("PATH");
  std::stringstream dirs(path_env != nullptr ? path_env : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && executable(std::filesystem::path(dir) / name)) {
      return std::filesystem::path(dir) / name;
    }
  }
  return std::nullopt;
}

}  // namespace moetune
