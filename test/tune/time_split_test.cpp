#include "autotune/tune/time_split.hpp"

#include <catch2/catch.hpp>

using namespace moetune;
using namespace moetune::tune;
using Catch::Contains;

TEST_CASE("the time split lists every bucket's phases, dashes for a bucket without them", "[tune]") {
  nlohmann::json timed{{"token", 8},
                       {"line", 2},
                       {"seconds", {{"setup", 1.0}, {"check", 2.0}, {"screen", 3.0}, {"verify", 4.0},
                                    {"select", 0.5}, {"confirm", 6.0}, {"total", 16.5}}}};
  nlohmann::json old{{"token", 16}, {"line", 3}};  // journaled before the split existed
  std::vector<nlohmann::json> reports{timed, old};
  auto const md = time_split_markdown(CompileStep{205, 200, 1, 9.75}, reports);
  CHECK_THAT(md, Contains("## Where the time went"));
  CHECK_THAT(md, Contains("205 units, 200 from the code cache, 1 failed, 9.8 s"));
  CHECK_THAT(md, Contains("| token 8 (line 2) | 1.0 | 2.0 | 3.0 | 4.0 | 0.5 | 6.0 | 16.5 |"));
  CHECK_THAT(md, Contains("| token 16 (line 3) | — | — | — | — | — | — | — |"));
  CHECK_THAT(md, Contains("| **all** | 1.0 | 2.0 | 3.0 | 4.0 | 0.5 | 6.0 | **16.5** |"));
  // No line of it starts like a line of the bucket table (`| <token> |`).
  CHECK_THAT(md, !Contains("\n| 8 |"));
  // Without a compile step (nothing compiled) the line is left out, the table stays.
  auto const none = time_split_markdown(std::nullopt, reports);
  CHECK_THAT(none, !Contains("Compile (once"));
  CHECK(to_json(std::optional<CompileStep>{}).is_null());
  CHECK(to_json(std::optional<CompileStep>{CompileStep{3, 1, 0, 2.5}})["from_cache"] == 1);
}
