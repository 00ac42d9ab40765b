#pragma once
// A child process spoken to in lines: requests on its stdin, answers on its stdout, every
// wait bounded by a deadline. Its stderr is passed through to ours as it arrives (its logs
// stay visible) and the last lines are kept, so that when it dies the reason can say what it
// printed last. Built for the tuner's worker (remote_sampler.hpp): a GPU fault or a hang must
// cost one child, never the parent, so nothing here blocks without a deadline and the child
// can always be SIGKILLed and reaped.
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace moetune {

class WorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts argv[0] (a path; not looked up on PATH) with the given arguments and our
  // environment. Throws Error when it cannot be started at all.
  explicit WorkerProcess(const std::vector<std::string>& argv);
  // SIGKILLs the child if it still runs, and reaps it.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return m_pid; }

  // Writes `line` and a newline. False when the child no longer reads (it died): never
  // SIGPIPE, which would end the parent.
  [[nodiscard]] bool send(std::string_view line);

  enum class Read { line, timeout, eof };
  // The next line of the child's stdout (without the newline), waiting until `deadline`.
  [[nodiscard]] Read read_line(std::string& line, Clock::time_point deadline);

  // SIGKILL and reap.
  void kill();
  // Waits up to `grace` for the child to exit (after it closed its stdout or said it will
  // exit), then SIGKILLs it; reaps it and returns how it ended: "exited with status 3",
  // "killed by signal 6 (Aborted)".
  std::string wait_exit(std::chrono::milliseconds grace);
  [[nodiscard]] bool running() const { return m_pid > 0 && !m_reaped; }

  // The last lines the child wrote to stderr, joined with " | " (for one-line reasons).
  [[nodiscard]] std::string stderr_tail() const;

 private:
  void pump_stderr();  // forwards what is available now; never blocks
  std::string reap(bool block);

  pid_t m_pid = -1;
  bool m_reaped = false;
  std::string m_exit;
  int m_in = -1;   // the child's stdin (we write)
  int m_out = -1;  // the child's stdout (we read)
  int m_err = -1;  // the child's stderr (we read and forward)
  std::string m_out_buffer;
  std::string m_err_partial;
  std::deque<std::string> m_err_lines;
};

}  // namespace moetune
