// libFuzzer target: the AITER CSV reader (raw CSV layer and typed fMoE conversion) on
// arbitrary bytes. The reader must report bad input as moetune::Error (InputError), never crash,
// hang or throw anything else (main would call that an internal error). It also checks the
// writer's first promise: a table read without errors renders back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "autotune/core/error.hpp"
#include "autotune/io/csv_table.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/fmoe_writer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view const text(reinterpret_cast<const char*>(data), size);
  try {
    auto const csv = moetune::io::parse_csv(text, "fuzz.csv", moetune::io::fmoe_csv_options());
    auto const parsed = moetune::io::parse_fmoe_csv(csv);
    if (parsed.error_count() == 0) {
      auto const rendered = moetune::io::render_fmoe_table(parsed.table);
      if (rendered != text) {
        std::fprintf(stderr, "round trip changed the bytes of an error-free table\n");
        std::abort();
      }
    }
  } catch (const moetune::Error&) {
    // A reported error is the expected outcome for bad input.
  }
  return 0;
}
