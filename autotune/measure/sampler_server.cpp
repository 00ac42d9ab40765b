#include "autotune/measure/sampler_server.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <istream>

#include <nlohmann/json.hpp>

#include "autotune/core/error.hpp"
#include "autotune/measure/sampler_wire.hpp"

namespace moetune::measure {

using nlohmann::json;

namespace {

// Reads one line from a raw descriptor (no stdio buffering shared with anything else).
bool read_line(int fd, std::string& buffer, std::string& line) {
  for (;;) {
    if (auto nl = buffer.find('\n'); nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    char chunk[65536];
    ssize_t const n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
}

// Compiler logs and driver messages may hold bytes that are not UTF-8: replace them rather
// than fail to answer.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json error_json(const SamplerError& e) {
  auto j = wire::to_json(e);
  j["type"] = "sampler";
  return j;
}

}  // namespace

SamplerServer::SamplerServer(Sampler& sampler, int in_fd, int out_fd, ServeOptions options)
    : m_sampler(sampler), m_in(in_fd), m_out(out_fd), m_opt(options) {}

void SamplerServer::write_line(const std::string& line) {
  std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t const n = ::write(m_out, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (!(n < 0 && errno == EINTR)) {
      throw Error("worker: the parent stopped reading");
    }
  }
}

void SamplerServer::building(const std::string& arm) {
  write_line(dump(json{{"event", "building"}, {"arm", arm}}));
}

int SamplerServer::run() {
  write_line(dump(json{{"event", "ready"},
                       {"pid", static_cast<long>(::getpid())},
                       {"repeats", m_sampler.repeats()}}));
  std::string buffer, line;
  while (read_line(m_in, buffer, line)) {
    if (line.empty()) continue;
    json answer;
    bool launch_error = false;
    try {
      auto const request = json::parse(line);
      answer["id"] = request.at("id");
      auto const method = request.at("method").get<std::string>();
      auto const& params = request.at("params");
      try {
        if (method == "begin_bucket") {
          m_sampler.begin_bucket(wire::bucket_from_json(params.at("bucket")));
          answer["result"] = nullptr;
        } else if (method == "prepare") {
          auto const p = m_sampler.prepare(wire::pair_from_json(params.at("pair")));
          launch_error = p.status == Outcome::launch_error;
          answer["result"] = wire::to_json(p);
        } else if (method == "quick_check") {
          auto const v = m_sampler.quick_check(wire::pair_from_json(params.at("pair")));
          launch_error = !v.passed && v.failure == Outcome::launch_error;
          answer["result"] = wire::to_json(v);
        } else if (method == "verify") {
          auto const v = m_sampler.verify(wire::pair_from_json(params.at("pair")),
                                          wire::pair_from_json(params.at("baseline")));
          launch_error = !v.passed && v.failure == Outcome::launch_error;
          answer["result"] = wire::to_json(v);
        } else if (method == "begin_block") {
          auto const block = wire::block_from_json(params.at("block"));
          try {
            m_sampler.begin_block(block);
          } catch (const GpuError& e) {
            // Outside any arm (fresh inputs and weights): the block's own set-up failed,
            // which the protocol must treat as the baseline's failure.
            throw SamplerError(Outcome::launch_error,
                               block.arms.empty() ? std::string() : block.arms.front().label,
                               std::string("setting up the block failed: ") + e.what());
          }
          answer["result"] = nullptr;
        } else if (method == "release_arm") {
          m_sampler.release_arm(params.at("arm").get<std::string>());
          answer["result"] = nullptr;
        } else if (method == "sample_us") {
          answer["result"] = wire::number(m_sampler.sample_us(
              params.at("arm").get<std::string>(),
              wire::parse_unit(params.at("unit").get<std::string>())));
        } else {
          throw Error("worker: unknown method '" + method + "'");
        }
      } catch (const SamplerError& e) {
        launch_error = e.kind() == Outcome::launch_error;
        answer["error"] = error_json(e);
      }
    } catch (const std::exception& e) {
      answer["error"] = {{"type", "error"}, {"message", e.what()}};
    }
    bool const leave = launch_error && m_opt.exit_after_launch_error;
    if (leave) answer["exit"] = true;
    write_line(dump(answer));
    if (leave) return 3;
  }
  return 0;
}

}  // namespace moetune::measure
