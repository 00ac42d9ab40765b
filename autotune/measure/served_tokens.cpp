#include "autotune/measure/served_tokens.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "autotune/core/error.hpp"

namespace moetune::measure {

ServedTokens served_tokens(std::int64_t token) {
  if (token < 1) throw Error(fmt::format("bucket token {} is not a positive token count", token));
  return {token / 2 + 1, token};
}

std::vector<std::int64_t> verification_ms(std::int64_t token, std::int64_t timed_m) {
  auto const served = served_tokens(token);
  std::vector<std::int64_t> ms{timed_m};
  for (auto const M : {served.lowest, served.highest}) {
    if (std::find(ms.begin(), ms.end(), M) == ms.end()) ms.push_back(M);
  }
  return ms;
}

}  // namespace moetune::measure
