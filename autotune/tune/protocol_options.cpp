#include "autotune/tune/protocol_options.hpp"

namespace moetune::tune {
namespace {
// SplitMix64 finaliser: decorrelates nearby (phase, attempt, index) triples.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

std::uint64_t block_seed(std::uint64_t run_seed, Phase phase, int attempt, int index) {
  std::uint64_t h = mix(run_seed);
  h = mix(h ^ static_cast<std::uint64_t>(phase));
  h = mix(h ^ static_cast<std::uint64_t>(attempt));
  return mix(h ^ static_cast<std::uint64_t>(index));
}

}  // namespace moetune::tune
