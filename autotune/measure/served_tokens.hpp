#pragma once
// Which token counts a tuned row is used for, and so which ones its pair must be verified at.
//
// AITER rounds the runtime M up to the next power of two and looks up the row whose `token`
// equals it, so the row of bucket `token` serves every M in (token/2, token]: M = token/2 + 1
// up to token (token 1 serves M = 1 only). A pair timed at one M of that range (the bucket's
// actual_m, e.g. M=6 for bucket 8) is run at all of them, so verification checks both ends.
// A token that is not a power of two (the planner warns: AITER never looks it up) gets the
// same range formula.
#include <cstdint>
#include <vector>

namespace moetune::measure {

struct ServedTokens {
  std::int64_t lowest = 1;
  std::int64_t highest = 1;
};

// Throws moetune::Error for token < 1.
[[nodiscard]] ServedTokens served_tokens(std::int64_t token);

// The M values a bucket's pair is verified at: `timed_m` first (gate 5, the changed-input
// graph replay, runs at the first; it should be the M the graphs are timed at), then the
// lowest and the highest M the bucket serves, each once.
[[nodiscard]] std::vector<std::int64_t> verification_ms(std::int64_t token, std::int64_t timed_m);

}  // namespace moetune::measure
