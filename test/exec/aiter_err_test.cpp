// Which verification check a tuned row's err1/err2 come from (no GPU: reports built by hand).
#include <catch2/catch.hpp>

#include "autotune/exec/verifier.hpp"

using namespace moetune;

namespace {
exec::CheckResult check(std::int64_t m, moe::RoutingKind kind, double e1, double e2) {
  exec::CheckResult c;
  c.routing.kind = kind;
  c.name = "M=" + std::to_string(m) + " " + moe::to_string(c.routing);
  c.passed = true;
  c.m = m;
  c.aiter_err1 = e1;
  c.aiter_err2 = e2;
  return c;
}
}  // namespace

TEST_CASE("err1/err2 come from the uniform check at M = token", "[exec]") {
  exec::VerifyReport report;
  report.checks.push_back(check(33, moe::RoutingKind::uniform, 0.5, 0.5));
  report.checks.push_back(check(64, moe::RoutingKind::uniform, 0.001, 0.002));
  report.checks.push_back(check(64, moe::RoutingKind::concentrated, 0.9, 0.9));
  exec::CheckResult replay;  // a check that is no reference run: no shares
  replay.name = "graph replay: changed inputs";
  replay.passed = true;
  report.checks.push_back(replay);
  auto const err = exec::aiter_err_at(report, 64);
  REQUIRE(err);
  CHECK(err->err1 == 0.001);
  CHECK(err->err2 == 0.002);
  CHECK_FALSE(exec::aiter_err_at(report, 128));  // no check at the token: no figure invented
}
