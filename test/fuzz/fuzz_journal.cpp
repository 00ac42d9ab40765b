// libFuzzer target: the tuning journal reader (`tune --resume`) on arbitrary bytes. A journal
// is a file the run itself wrote, but a crash, a full disk or a hand edit can leave anything
// in it: a bad journal must come back as moetune::Error (or a torn-last-line warning), never a
// crash or another exception. The reader takes a path, so each input goes through a file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "autotune/core/error.hpp"
#include "autotune/tune/journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static std::filesystem::path const file =
      std::filesystem::temp_directory_path() / ("moetune_fuzz_journal_" + std::to_string(getpid()) + ".jsonl");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    auto const contents = moetune::tune::read_journal(file);
    // What resume relies on: the good prefix never extends past the file.
    if (contents.valid_bytes > size) __builtin_trap();
  } catch (const moetune::Error&) {
  }
  return 0;
}
