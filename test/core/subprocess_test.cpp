#include <catch2/catch.hpp>

#include "autotune/core/error.hpp"
#include "autotune/core/subprocess.hpp"
#include "autotune/core/thread_pool.hpp"

using moetune::run_process;

TEST_CASE("run_process captures output and exit status", "[core][subprocess]") {
  auto const ok = run_process({"sh", "-c", "echo out; echo err >&2; exit 0"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.output.find("out\n") != std::string::npos);
  CHECK(ok.output.find("err\n") != std::string::npos);

  auto const failed = run_process({"sh", "-c", "exit 3"});
  CHECK(failed.exit_code == 3);

  auto const in_dir = run_process({"pwd"}, "/tmp");
  CHECK(in_dir.output == "/tmp\n");
}

TEST_CASE("run_process reports a tool that cannot start", "[core][subprocess]") {
  CHECK_THROWS_AS(run_process({"moetune-no-such-tool-xyz"}), moetune::Error);
  CHECK_FALSE(moetune::find_program("moetune-no-such-tool-xyz").has_value());
  CHECK(moetune::find_program("sh").has_value());
}

TEST_CASE("run_process is safe from many threads at once", "[core][subprocess]") {
  std::vector<std::string> outputs(16);
  moetune::parallel_for(outputs.size(), 4, [&](std::size_t i) {
    outputs[i] = run_process({"sh", "-c", "echo " + std::to_string(i)}).output;
  });
  for (std::size_t i = 0; i < outputs.size(); ++i) CHECK(outputs[i] == std::to_string(i) + "\n");
}
