#include "autotune/core/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

extern char** environ;

namespace moetune {
namespace {

constexpr std::size_t kKeptStderrLines = 12;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    char const* name = ::strsignal(WTERMSIG(status));
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), name ? name : "?");
  }
  return fmt::format("ended with wait status {}", status);
}

}  // namespace

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error("WorkerProcess: empty command");
  // Three pipes, all O_CLOEXEC: children that other threads spawn meanwhile (the compile
  // pool's clang) must not inherit our ends, or an EOF would wait for them. posix_spawn's
  // dup2 clears the flag on the child's 0/1/2 only.
  std::array<int, 2> in{-1, -1}, out{-1, -1}, err{-1, -1};
  if (::pipe2(in.data(), O_CLOEXEC) != 0 || ::pipe2(out.data(), O_CLOEXEC) != 0 ||
      ::pipe2(err.data(), O_CLOEXEC) != 0) {
    int const e = errno;
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) ::close(fd);
    }
    throw Error(fmt::format("cannot create pipes for '{}': {}", argv[0], std::strerror(e)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  std::vector<char*> args;
  for (auto const& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int const rc = ::posix_spawn(&m_pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  m_in = in[1];
  m_out = out[0];
  m_err = err[0];
  if (rc != 0) {
    m_pid = -1;
    close_fd(m_in);
    close_fd(m_out);
    close_fd(m_err);
    throw Error(fmt::format("cannot start worker '{}': {}", argv[0], std::strerror(rc)));
  }
  // Reads never block: every wait goes through poll() with a deadline.
  ::fcntl(m_out, F_SETFL, ::fcntl(m_out, F_GETFL) | O_NONBLOCK);
  ::fcntl(m_err, F_SETFL, ::fcntl(m_err, F_GETFL) | O_NONBLOCK);
}

WorkerProcess::~WorkerProcess() {
  if (running()) kill();
  close_fd(m_in);
  close_fd(m_out);
  close_fd(m_err);
}

bool WorkerProcess::send(std::string_view line) {
  if (m_in < 0) return false;
  std::string text(line);
  text += '\n';
  // SIGPIPE is blocked on this thread while writing: a dead child then gives EPIPE, and the
  // signal it leaves pending is taken back before unblocking, so no process-wide handler
  // has to change.
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  bool ok = true;
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t const n = ::write(m_in, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      ok = false;
      break;
    }
  }
  if (!ok && errno == EPIPE) {
    timespec const zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return ok;
}

void WorkerProcess::pump_stderr() {
  if (m_err < 0) return;
  std::array<char, 4096> buf{};
  for (;;) {
    ssize_t const n = ::read(m_err, buf.data(), buf.size());
    if (n > 0) {
      // Passed through as it comes: the worker's logs are the run's logs.
      [[maybe_unused]] auto const w = ::write(STDERR_FILENO, buf.data(), static_cast<std::size_t>(n));
      m_err_partial.append(buf.data(), static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = m_err_partial.find('\n')) != std::string::npos) {
        if (nl > 0) m_err_lines.push_back(m_err_partial.substr(0, nl));
        m_err_partial.erase(0, nl + 1);
        if (m_err_lines.size() > kKeptStderrLines) m_err_lines.pop_front();
      }
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n == 0) close_fd(m_err);  // EOF: the child is gone or closed it
      return;
    }
  }
}

WorkerProcess::Read WorkerProcess::read_line(std::string& line, Clock::time_point deadline) {
  for (;;) {
    if (auto nl = m_out_buffer.find('\n'); nl != std::string::npos) {
      line = m_out_buffer.substr(0, nl);
      m_out_buffer.erase(0, nl + 1);
      return Read::line;
    }
    if (m_out < 0) return Read::eof;
    auto const now = Clock::now();
    if (now >= deadline) return Read::timeout;
    auto const left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    std::array<pollfd, 2> fds{{{m_out, POLLIN, 0}, {m_err, POLLIN, 0}}};
    int const n = ::poll(fds.data(), m_err >= 0 ? 2 : 1,
                         static_cast<int>(std::min<long long>(left, 60'000)));
    if (n < 0 && errno != EINTR) throw Error(fmt::format("poll: {}", std::strerror(errno)));
    if (m_err >= 0 && fds[1].revents != 0) pump_stderr();
    if (fds[0].revents == 0) continue;
    std::array<char, 65536> buf{};
    ssize_t const got = ::read(m_out, buf.data(), buf.size());
    if (got > 0) {
      m_out_buffer.append(buf.data(), static_cast<std::size_t>(got));
    } else if (got == 0) {
      close_fd(m_out);
    } else if (errno != EINTR && errno != EAGAIN) {
      close_fd(m_out);
    }
  }
}

std::string WorkerProcess::reap(bool block) {
  if (m_reaped || m_pid <= 0) return m_exit;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(m_pid, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == m_pid) {
    m_reaped = true;
    m_exit = describe_status(status);
  } else if (r < 0) {
    m_reaped = true;  // not our child any more (reaped elsewhere): nothing left to wait for
    m_exit = fmt::format("could not be waited for: {}", std::strerror(errno));
  }
  return m_exit;
}

void WorkerProcess::kill() {
  if (!running()) return;
  ::kill(m_pid, SIGKILL);
  reap(true);
  pump_stderr();
  close_fd(m_in);
}

std::string WorkerProcess::wait_exit(std::chrono::milliseconds grace) {
  close_fd(m_in);  // a worker waiting for its next request sees EOF and leaves
  auto const deadline = Clock::now() + grace;
  while (running()) {
    pump_stderr();
    if (!reap(false).empty()) break;
    if (Clock::now() >= deadline) {
      kill();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pump_stderr();
  return m_exit;
}

std::string WorkerProcess::stderr_tail() const {
  std::string out;
  auto lines = m_err_lines;
  if (!m_err_partial.empty()) lines.push_back(m_err_partial);
  std::size_t const first = lines.size() > 4 ? lines.size() - 4 : 0;
  for (std::size_t i = first; i < lines.size(); ++i) {
    out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out;
}

}  // namespace moetune
