#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include "autotune/core/error.hpp"
#include "autotune/moe/routing.hpp"
#include "autotune/moe/workload.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;
using namespace moetune::moe;

namespace {
void check_well_formed(const Routing& r) {
  REQUIRE(r.ids.size() == static_cast<std::size_t>(r.tokens * r.topk));
  REQUIRE(r.weights.size() == r.ids.size());
  for (std::int64_t t = 0; t < r.tokens; ++t) {
    std::set<std::int32_t> seen;
    double sum = 0;
    for (int k = 0; k < r.topk; ++k) {
      CHECK(r.id(t, k) >= 0);
      CHECK(r.id(t, k) < r.experts);
      seen.insert(r.id(t, k));
      CHECK(r.weight(t, k) > 0.0f);
      sum += r.weight(t, k);
    }
    CHECK(seen.size() == static_cast<std::size_t>(r.topk));
    CHECK(sum == Approx(1.0).margin(1e-6));
  }
}

InputError parse_error(std::string_view text, int experts, int topk) {
  try {
    (void)parse_routing_file(text, "rec.csv", experts, topk);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return InputError("", 0, 0, "");
}
}  // namespace

TEST_CASE("every routing kind gives distinct experts and normalised weights", "[moe]") {
  for (auto const* spec : {"uniform", "round_robin", "concentrated", "zipf:1.2", "zipf:0"}) {
    CAPTURE(spec);
    check_well_formed(make_routing(parse_routing_spec(spec), 100, 16, 4, 7));
  }
  // topk == E is the extreme where every token takes every expert.
  check_well_formed(make_routing(parse_routing_spec("uniform"), 10, 5, 5, 1));
}

TEST_CASE("routing is deterministic for a seed and changes with it", "[moe]") {
  for (auto const* spec : {"uniform", "zipf:1.1", "concentrated"}) {
    CAPTURE(spec);
    auto const a = make_routing(parse_routing_spec(spec), 64, 32, 6, 123);
    auto const b = make_routing(parse_routing_spec(spec), 64, 32, 6, 123);
    auto const c = make_routing(parse_routing_spec(spec), 64, 32, 6, 124);
    CHECK(a.ids == b.ids);
    CHECK(a.weights == b.weights);
    CHECK(a.ids != c.ids);
    CHECK(a.weights != c.weights);
    // Fewer tokens: a prefix of the same routing.
    auto const prefix = make_routing(parse_routing_spec(spec), 8, 32, 6, 123);
    CHECK(std::equal(prefix.ids.begin(), prefix.ids.end(), a.ids.begin()));
  }
}

TEST_CASE("generated data matches pinned values", "[moe]") {
  // Pins the generators: a change to random.hpp or to a draw silently changes every workload,
  // and with it every recorded result. Update these only deliberately.
  auto const r = make_routing(RoutingSpec{}, 2, 8, 2, 0);
  CHECK(r.ids == std::vector<std::int32_t>{1, 4, 5, 0});
  CHECK(r.weight(0, 0) == Approx(0x1.741bbp-4).epsilon(1e-6));  // softmax uses libm's exp
  CHECK(r.weight(1, 1) == Approx(0x1.f4489cp-2).epsilon(1e-6));
  auto const z = make_routing(parse_routing_spec("zipf:1.2"), 3, 16, 2, 0);
  CHECK(z.ids == std::vector<std::int32_t>{13, 8, 5, 12, 13, 6});
  MoeShape s;
  s.hidden = 32;
  s.inter = 32;
  s.experts = 1;
  s.topk = 1;
  auto const x = make_activations(s, 0);
  CHECK(x.x_bf16[0] == 0xbd32);
  CHECK(x.x_bf16[1] == 0xbe0b);
  auto const w = make_weights(s, 0, 1);
  CHECK(w.w1_codes[0] == 0x32);
  CHECK(w.w1_codes[1] == 0xba);
  CHECK(w.w1_scales[0] == 0x7c);
}

TEST_CASE("concentrated routing uses exactly topk experts", "[moe]") {
  auto const r = make_routing(parse_routing_spec("concentrated"), 257, 384, 6, 9);
  CHECK(count_experts_touched(r) == 6);
  for (std::int64_t t = 1; t < r.tokens; ++t) {
    for (int k = 0; k < r.topk; ++k) CHECK(r.id(t, k) == r.id(0, k));
  }
}

TEST_CASE("round_robin spreads tokens evenly", "[moe]") {
  auto const r = make_routing(parse_routing_spec("round_robin"), 8, 16, 4, 0);
  CHECK(r.id(0, 0) == 0);
  CHECK(r.id(1, 0) == 4);
  CHECK(r.id(4, 0) == 0);
  for (auto load : expert_loads(r)) CHECK(load == 2);
}

TEST_CASE("zipf routing is skewed, uniform is not", "[moe]") {
  auto const max_load = [](const Routing& r) {
    auto const loads = expert_loads(r);
    return *std::max_element(loads.begin(), loads.end());
  };
  auto const zipf = make_routing(parse_routing_spec("zipf:1.5"), 2000, 64, 4, 3);
  auto const uniform = make_routing(parse_routing_spec("uniform"), 2000, 64, 4, 3);
  // Uniform: about 125 per expert. zipf:1.5: the top expert is in most tokens.
  CHECK(max_load(uniform) < 200);
  CHECK(max_load(zipf) > 1000);
  CHECK(count_experts_touched(uniform) == 64);
  // Uniform routing touches about D(M) = E(1-(1-topk/E)^M) experts.
  auto const small = make_routing(parse_routing_spec("uniform"), 8, 384, 6, 11);
  CHECK(count_experts_touched(small) > 35);
  CHECK(count_experts_touched(small) <= 48);
}

TEST_CASE("routing specs parse, print back and reject nonsense clearly", "[moe]") {
  for (auto const* text : {"uniform", "round_robin", "concentrated", "zipf:1.2", "zipf:0",
                           "file:/tmp/rec.csv"}) {
    CHECK(to_string(parse_routing_spec(text)) == text);
  }
  CHECK(parse_routing_spec("zipf:1.2").zipf_exponent == 1.2);
  CHECK(parse_routing_spec("file:a b.csv").file == "a b.csv");
  CHECK_THROWS_WITH(parse_routing_spec("zipf"), Catch::Contains("zipf needs an exponent"));
  CHECK_THROWS_WITH(parse_routing_spec("zipf:abc"), Catch::Contains("'abc' is not a finite number"));
  CHECK_THROWS_WITH(parse_routing_spec("zipf:-1"), Catch::Contains("not a finite number >= 0"));
  CHECK_THROWS_WITH(parse_routing_spec("file:"), Catch::Contains("file: needs a path"));
  CHECK_THROWS_WITH(parse_routing_spec("uniformly"),
                    Catch::Contains("unknown routing mode") && Catch::Contains("round_robin"));
  CHECK_THROWS_AS(make_routing(RoutingSpec{}, 4, 4, 5, 0), Error);
}

TEST_CASE("routing file round trip", "[moe]") {
  auto const dir = test::scratch_dir("routing_roundtrip");
  auto const original = make_routing(parse_routing_spec("zipf:0.8"), 50, 40, 6, 5);
  write_routing_file(dir / "rec.csv", original);
  RoutingSpec spec;
  spec.kind = RoutingKind::file;
  spec.file = dir / "rec.csv";
  auto const replayed = make_routing(spec, 50, 40, 6, 5);
  CHECK(replayed.ids == original.ids);
  CHECK(replayed.weights == original.weights);  // weights come from the seed alone
  // More tokens than rows: rows are reused from the top.
  auto const longer = make_routing(spec, 120, 40, 6, 5);
  CHECK(longer.id(50, 0) == original.id(0, 0));
  CHECK(longer.id(119, 5) == original.id(19, 5));
}

TEST_CASE("routing files accept blanks, comments and spaces as separators", "[moe]") {
  auto const r = parse_routing_file("# recorded\n\n 1, 2 ,3\n4 5 6  # trailing\r\n", "x", 8, 3);
  CHECK(r.rows() == 2);
  CHECK(r.ids == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("malformed routing files name file, line and column", "[moe]") {
  auto e = parse_error("1,2\n3,x\n", 4, 2);
  CHECK(e.line() == 2);
  CHECK(e.column() == 3);
  CHECK(std::string(e.what()).starts_with("rec.csv:2:3: error: expected an expert id"));

  e = parse_error("1,9\n", 4, 2);
  CHECK((e.line() == 1 && e.column() == 3));
  CHECK(e.message().find("out of range [0, 3]") != std::string::npos);

  e = parse_error("0,1\n# c\n2,  2\n", 4, 2);
  CHECK((e.line() == 3 && e.column() == 5));
  CHECK(e.message().find("appears twice") != std::string::npos);

  e = parse_error("0,1,2\n", 4, 2);
  CHECK((e.line() == 1 && e.column() == 5));
  CHECK(e.message().find("more than topk=2") != std::string::npos);

  e = parse_error("0,1\n3\n", 4, 2);
  CHECK((e.line() == 2 && e.column() == 2));
  CHECK(e.message().find("expected 2 expert ids (topk), found 1") != std::string::npos);

  e = parse_error("0,,1\n", 4, 2);
  CHECK((e.line() == 1 && e.column() == 3));
  e = parse_error("0,1,\n", 4, 2);
  CHECK((e.line() == 1 && e.column() == 5));
  e = parse_error("-1,1\n", 4, 2);
  CHECK((e.line() == 1 && e.column() == 1));

  e = parse_error("# nothing\n\n", 4, 2);
  CHECK(e.message().find("no token rows") != std::string::npos);
}

TEST_CASE("a missing routing file is a FileError naming it", "[moe]") {
  RoutingSpec spec;
  spec.kind = RoutingKind::file;
  spec.file = test::scratch_dir("routing_missing") / "absent.csv";
  CHECK_THROWS_AS(make_routing(spec, 4, 8, 2, 0), FileError);
  CHECK_THROWS_WITH(make_routing(spec, 4, 8, 2, 0), Catch::Contains("absent.csv"));
}
