#include <catch2/catch.hpp>

#include <fstream>

#include "autotune/core/atomic_file.hpp"
#include "autotune/jit/code_cache.hpp"
#include "autotune/jit/compile_pool.hpp"
#include "test_kernel_family.hpp"
#include "test/support/test_paths.hpp"

using namespace moetune;

namespace {

std::unique_ptr<jit::Compiler> compiler_for(const std::string& arch,
                                            std::vector<jit::EmbeddedFile> headers,
                                            std::vector<std::string> extra = {}) {
  return jit::make_compiler({arch, std::move(headers), std::move(extra)});
}

}  // namespace

TEST_CASE("cold compile misses, warm compile hits with the identical image", "[jit][cache]") {
  auto const arch = GENERATE(as<std::string>{}, "sm_90", "gfx942");
  INFO("arch " << arch);
  jit::CodeCache const cache(test::scratch_dir("jit_cache_cold_warm"));
  auto const compiler = compiler_for(arch, test::tiny_kernel_headers());
  auto const source = test::scale_unit(2, 64);

  jit::CompileOutcome const cold = jit::compile_unit(*compiler, &cache, source);
  REQUIRE(cold.status == jit::CompileStatus::ok);
  CHECK_FALSE(cold.cache_hit);
  CHECK(std::filesystem::exists(cache.entry_path(cold.key, arch)));

  jit::CompileOutcome const warm = jit::compile_unit(*compiler, &cache, source);
  REQUIRE(warm.status == jit::CompileStatus::ok);
  CHECK(warm.cache_hit);
  CHECK(warm.key == cold.key);
  CHECK(warm.result.image == cold.result.image);
  REQUIRE(warm.result.kernels.size() == 1);
  CHECK(warm.result.kernels[0].lowered_name == cold.result.kernels[0].lowered_name);
  CHECK(warm.result.kernels[0].resources.registers == cold.result.kernels[0].resources.registers);
  CHECK(warm.result.kernels[0].resources.shared_bytes ==
        cold.result.kernels[0].resources.shared_bytes);
}

TEST_CASE("the key changes with source, options, defines, headers, arch and kernel names",
          "[jit][cache]") {
  auto const headers = test::tiny_kernel_headers();
  auto const base_compiler = compiler_for("gfx942", headers);
  auto const source = test::scale_unit(2, 64);
  std::string const base = jit::cache_key(*base_compiler, source);
  CHECK(base.size() == 64);
  CHECK(jit::cache_key(*base_compiler, source) == base);  // deterministic

  auto changed_source = source;
  changed_source.source += "// comment\n";
  CHECK(jit::cache_key(*base_compiler, changed_source) != base);

  auto with_define = source;
  with_define.defines = {"MT_OFFSET=1.0f"};
  CHECK(jit::cache_key(*base_compiler, with_define) != base);

  auto other_names = source;
  other_names.kernel_names.push_back(test::scale_kernel_name(4, 64));
  CHECK(jit::cache_key(*base_compiler, other_names) != base);

  CHECK(jit::cache_key(*compiler_for("gfx942", headers, {"-ffast-math"}), source) != base);
  CHECK(jit::cache_key(*compiler_for("gfx950", headers), source) != base);

  auto edited_headers = headers;
  edited_headers[1].text += "\n// one more line\n";
  CHECK(jit::cache_key(*compiler_for("gfx942", edited_headers), source) != base);
}

TEST_CASE("a corrupted or truncated cache entry is detected and rebuilt", "[jit][cache]") {
  jit::CodeCache const cache(test::scratch_dir("jit_cache_corrupt"));
  auto const compiler = compiler_for("gfx942", test::tiny_kernel_headers());
  auto const source = test::scale_unit(2, 64);
  jit::CompileOutcome const cold = jit::compile_unit(*compiler, &cache, source);
  REQUIRE(cold.status == jit::CompileStatus::ok);
  auto const path = cache.entry_path(cold.key, "gfx942");
  std::string const good = read_file(path);

  SECTION("one flipped byte in the image") {
    std::string bad = good;
    bad[bad.size() - 10] = static_cast<char>(bad[bad.size() - 10] ^ 0x5a);
    write_file_atomically(path, bad);
  }
  SECTION("truncated") { write_file_atomically(path, good.substr(0, good.size() / 2)); }
  SECTION("empty") { write_file_atomically(path, ""); }
  SECTION("not a cache entry") { write_file_atomically(path, "hello\n"); }

  CHECK_FALSE(cache.load(cold.key, "gfx942").has_value());
  jit::CompileOutcome const rebuilt = jit::compile_unit(*compiler, &cache, source);
  CHECK(rebuilt.status == jit::CompileStatus::ok);
  CHECK_FALSE(rebuilt.cache_hit);
  CHECK(rebuilt.result.image == cold.result.image);
  CHECK(read_file(path) == good);  // republished whole
  CHECK(jit::compile_unit(*compiler, &cache, source).cache_hit);
}

TEST_CASE("failed compiles are not cached", "[jit][cache]") {
  jit::CodeCache const cache(test::scratch_dir("jit_cache_failure"));
  auto const compiler = compiler_for("gfx942", test::tiny_kernel_headers());
  jit::CompileOutcome const first = jit::compile_unit(*compiler, &cache, test::broken_unit());
  CHECK(first.status == jit::CompileStatus::compile_error);
  CHECK_FALSE(std::filesystem::exists(cache.entry_path(first.key, "gfx942")));
  CHECK_FALSE(first.log_head.empty());
}

TEST_CASE("the default cache directory follows XDG_CACHE_HOME", "[jit][cache]") {
  char const* saved = std::getenv("XDG_CACHE_HOME");
  std::string const restore = saved != nullptr ? saved : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  CHECK(jit::default_cache_dir() == std::filesystem::path("/tmp/xdg-test/moe-tune"));
  if (saved != nullptr) {
    ::setenv("XDG_CACHE_HOME", restore.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
}
