#pragma once
// The worker's side of the isolation (remote_sampler.hpp is the parent's): serves one
// Sampler over a line protocol, one JSON object per line.
//
//   request   {"id": 7, "method": "sample_us", "params": {"arm": "candidate", "unit": "full"}}
//   answer    {"id": 7, "result": 101.3}
//          or {"id": 7, "error": {"type": "sampler", "kind": "launch_error", "arm": "...",
//                                  "message": "..."}, "exit": true}
//   event     {"event": "building", "arm": "candidate"}   (begin_block, before each arm)
//   greeting  {"event": "ready", "pid": 1234, "repeats": 16} (once, when the sampler exists)
//
// Methods: begin_bucket {bucket}, prepare {pair}, quick_check {pair}, verify {pair,
// baseline}, begin_block
// {block}, sample_us {arm, unit}. "building" events let the parent blame the right arm when
// the worker dies or hangs inside begin_block, where the request itself names no arm.
// An error of type "error" is a bug or misuse (an unknown arm), not a candidate's failure.
#include <string>

#include "autotune/measure/sampler.hpp"

namespace moetune::measure {

struct ServeOptions {
  // After an answer that reports a launch_error, say "exit": true and return: on a GPU a
  // fault may leave the context unusable (an illegal address is sticky) or memory scribbled
  // on, and telling sticky from harmless errors apart is not worth a wrong sample. The
  // parent starts a fresh worker for the next call.
  bool exit_after_launch_error = false;
};

class SamplerServer {
 public:
  // Answers and events go to `out_fd` only (the worker keeps its stdout for this and sends
  // everything else it prints to stderr).
  SamplerServer(Sampler& sampler, int in_fd, int out_fd, ServeOptions options = {});

  // Tells the parent which arm is being built now; samplers call it through their build
  // observer. Written at once, so the parent knows even if the build then hangs.
  void building(const std::string& arm);

  // The greeting, then requests until EOF on `in_fd` (returns 0) or an answer that carried
  // "exit" (returns 3).
  int run();

 private:
  void write_line(const std::string& line);
  Sampler& m_sampler;
  int m_in;
  int m_out;
  ServeOptions m_opt;
};

}  // namespace moetune::measure
