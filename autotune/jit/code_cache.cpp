#include "autotune/jit/code_cache.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <system_error>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/core/sha256.hpp"

namespace moetune::jit {
namespace {

constexpr std::string_view magic = "moe-tune code cache v1\n";

// Payload fields are length-prefixed ("<bytes> <text>\n"), so names, logs and the binary image
// need no escaping and a truncated file cannot parse as a shorter valid one.
void put(std::string& out, std::string_view field) {
  out += fmt::format("{} ", field.size());
  out += field;
  out += '\n';
}
void put(std::string& out, long long value) { put(out, std::to_string(value)); }

class Reader {
 public:
  explicit Reader(std::string_view text) : m_text(text) {}

  std::string_view field() {
    std::size_t const space = m_text.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 20) throw bad("field length");
    std::size_t length = 0;
    for (char const c : m_text.substr(0, space)) {
      if (c < '0' || c > '9') throw bad("field length");
      length = length * 10 + static_cast<std::size_t>(c - '0');
    }
    if (m_text.size() < space + 1 + length + 1 || m_text[space + 1 + length] != '\n') {
      throw bad("truncated field");
    }
    std::string_view const value = m_text.substr(space + 1, length);
    m_text.remove_prefix(space + 1 + length + 1);
    return value;
  }
  long long number() {
    std::string const text(field());
    char* end = nullptr;
    long long const value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') throw bad("number");
    return value;
  }
  [[nodiscard]] bool done() const { return m_text.empty(); }

  static Error bad(std::string_view what) { return Error(fmt::format("bad {}", what)); }

 private:
  std::string_view m_text;
};

std::string serialize(const std::string& key, const std::string& unit_name,
                      const CompileResult& result) {
  std::string payload;
  put(payload, key);
  put(payload, unit_name);
  put(payload, static_cast<long long>(result.kernels.size()));
  for (auto const& kernel : result.kernels) {
    put(payload, kernel.name_expression);
    put(payload, kernel.lowered_name);
    ResourceUsage const& r = kernel.resources;
    for (int const value : {r.registers, r.sgprs, r.shared_bytes, r.spill_bytes, r.scratch_bytes}) {
      put(payload, value);
    }
  }
  put(payload, result.log);
  put(payload, std::string_view(reinterpret_cast<const char*>(result.image.data()),
                                result.image.size()));
  std::string file(magic);
  file += sha256_hex(payload);
  file += '\n';
  file += payload;
  return file;
}

CompileResult deserialize(std::string_view file, const std::string& key) {
  if (!file.starts_with(magic)) throw Reader::bad("header");
  file.remove_prefix(magic.size());
  if (file.size() < 65 || file[64] != '\n') throw Reader::bad("checksum line");
  std::string_view const checksum = file.substr(0, 64);
  std::string_view const payload = file.substr(65);
  if (sha256_hex(payload) != checksum) throw Reader::bad("checksum (contents damaged)");

  Reader in(payload);
  if (in.field() != key) throw Reader::bad("key");
  (void)in.field();  // unit name, for people reading the cache
  CompileResult result;
  long long const kernels = in.number();
  if (kernels < 0 || kernels > 1'000'000) throw Reader::bad("kernel count");
  for (long long i = 0; i < kernels; ++i) {
    CompiledKernel kernel;
    kernel.name_expression = std::string(in.field());
    kernel.lowered_name = std::string(in.field());
    ResourceUsage& r = kernel.resources;
    for (int* value : {&r.registers, &r.sgprs, &r.shared_bytes, &r.spill_bytes, &r.scratch_bytes}) {
      *value = static_cast<int>(in.number());
    }
    result.kernels.push_back(std::move(kernel));
  }
  result.log = std::string(in.field());
  std::string_view const image = in.field();
  auto const* begin = reinterpret_cast<const std::byte*>(image.data());
  result.image.assign(begin, begin + image.size());
  if (!in.done() || result.image.empty()) throw Reader::bad("trailing data");
  result.ok = true;
  return result;
}

}  // namespace

std::filesystem::path default_cache_dir() {
  if (char const* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "moe-tune";
  }
  if (char const* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".cache" / "moe-tune";
  }
  return std::filesystem::temp_directory_path() / "moe-tune-cache";
}

std::string cache_key(const Compiler& compiler, const KernelSource& source) {
  Sha256 hash;
  hash.update_field("moe-tune jit key v1");
  hash.update_field(compiler.kind());
  hash.update_field(compiler.identity());
  hash.update_field(compiler.arch());
  hash.update_field(source.source);
  auto const& headers = compiler.headers();
  hash.update_field(std::to_string(headers.size()));
  for (auto const& header : headers) {
    hash.update_field(header.name);
    hash.update_field(header.text);
  }
  auto const options = compiler.options(source);  // defines included
  hash.update_field(std::to_string(options.size()));
  for (auto const& option : options) hash.update_field(option);
  hash.update_field(std::to_string(source.kernel_names.size()));
  for (auto const& name : source.kernel_names) hash.update_field(name);
  return hash.finish_hex();
}

CodeCache::CodeCache(std::filesystem::path dir) : m_dir(std::move(dir)) {}

std::filesystem::path CodeCache::entry_path(const std::string& key,
                                            const std::string& arch) const {
  return m_dir / arch / key.substr(0, 2) / (key + ".bin");
}

std::optional<CompileResult> CodeCache::load(const std::string& key,
                                             const std::string& arch) const {
  auto const path = entry_path(key, arch);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  try {
    return deserialize(read_file(path), key);
  } catch (const Error& bad) {
    spdlog::debug("code cache: discarding damaged entry {}: {}", path.string(), bad.what());
    std::filesystem::remove(path, error);
    return std::nullopt;
  }
}

void CodeCache::store(const std::string& key, const std::string& arch,
                      const std::string& unit_name, const CompileResult& result) const {
  if (!result.ok) return;
  auto const path = entry_path(key, arch);
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) throw FileError(path.parent_path(), "create the cache directory", error.message());
  write_file_atomically(path, serialize(key, unit_name, result));
}

}  // namespace moetune::jit
