// libFuzzer target: the search-space loader (JSON syntax via nlohmann, then our structural
// checks with JSON paths in the messages) on arbitrary bytes. Bad input must come back as
// moetune::Error; any other exception or a crash is a bug (main would report it as internal).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "autotune/core/error.hpp"
#include "autotune/search/search_space.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view const text(reinterpret_cast<const char*>(data), size);
  try {
    auto const space = moetune::search::parse_search_space(text, "fuzz.json");
    // Touch what the loader produced so that it is not optimised away.
    std::size_t knobs = 0;
    for (auto const& arch : space.arches) knobs += arch.stage1.size() + arch.stage2.size();
    if (knobs == 0) __builtin_trap();  // every arch space has both stages
  } catch (const moetune::Error&) {
  }
  return 0;
}
