#include "autotune/jit/machine_code_digest.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "autotune/core/sha256.hpp"

namespace moetune::jit {
namespace {

// ELF64 little-endian, the only layout cubins and AMDGPU code objects use.
constexpr std::size_t kSectionHeaderOffset = 0x28;  // e_shoff
constexpr std::size_t kSectionHeaderSize = 0x3A;    // e_shentsize
constexpr std::size_t kSectionCount = 0x3C;         // e_shnum
constexpr std::size_t kSectionNames = 0x3E;         // e_shstrndx

enum : std::uint32_t {
  kNull = 0, kSymtab = 2, kStrtab = 3, kHash = 5, kDynamic = 6, kNobits = 8, kDynsym = 11,
  kGnuHash = 0x6ffffff6,
};

template <class T>
T read(std::span<const std::byte> bytes, std::size_t at) {
  T value{};
  if (at + sizeof(T) > bytes.size()) return value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

struct Section {
  std::uint32_t name = 0;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

bool is_elf64(std::span<const std::byte> image) {
  return image.size() >= 0x40 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0 &&
         static_cast<unsigned char>(image[4]) == 2;  // ELFCLASS64
}

std::vector<Section> sections_of(std::span<const std::byte> image) {
  auto const table = read<std::uint64_t>(image, kSectionHeaderOffset);
  auto const entry = read<std::uint16_t>(image, kSectionHeaderSize);
  auto const count = read<std::uint16_t>(image, kSectionCount);
  std::vector<Section> out;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t const at = table + i * entry;
    if (entry < 0x40 || at + 0x40 > image.size()) return {};  // malformed: digest it whole
    out.push_back({read<std::uint32_t>(image, at), read<std::uint32_t>(image, at + 4),
                   read<std::uint64_t>(image, at + 8), read<std::uint64_t>(image, at + 0x18),
                   read<std::uint64_t>(image, at + 0x20)});
  }
  return out;
}

std::string_view section_name(std::span<const std::byte> image, const std::vector<Section>& all,
                              const Section& s) {
  auto const names = read<std::uint16_t>(image, kSectionNames);
  if (names >= all.size()) return {};
  auto const& table = all[names];
  std::size_t const at = table.offset + s.name;
  if (at >= image.size()) return {};
  auto const* text = reinterpret_cast<const char*>(image.data() + at);
  return {text, strnlen(text, image.size() - at)};
}

// Tables of names (and the dynamic section, which records their sizes) differ between twins;
// .comment and .debug* are not executed.
bool names_or_notes(std::uint32_t type, std::string_view name) {
  if (type == kNull || type == kSymtab || type == kStrtab || type == kHash || type == kDynamic ||
      type == kDynsym || type == kGnuHash) {
    return true;
  }
  return name.starts_with(".comment") || name.starts_with(".debug");
}

// Every lowered kernel name in `text` replaced by "#<index>" (longest first, so a name that
// is a prefix of another never splits it).
std::string without_kernel_names(std::string text, const std::vector<CompiledKernel>& kernels) {
  std::vector<std::pair<std::string, std::string>> names;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    if (!kernels[k].lowered_name.empty()) {
      names.emplace_back(kernels[k].lowered_name, fmt::format("#{}", k));
    }
  }
  std::ranges::sort(names, [](auto const& a, auto const& b) { return a.first.size() > b.first.size(); });
  for (auto const& [name, placeholder] : names) {
    for (auto pos = text.find(name); pos != std::string::npos;
         pos = text.find(name, pos + placeholder.size())) {
      text.replace(pos, name.size(), placeholder);
    }
  }
  return text;
}

}  // namespace

std::string machine_code_digest(const CompileResult& result) {
  if (!result.ok || result.image.empty()) return {};
  std::span<const std::byte> const image(result.image);
  auto const sections = is_elf64(image) ? sections_of(image) : std::vector<Section>{};
  if (sections.empty()) return sha256_hex(image);
  std::string hashed;
  for (auto const& s : sections) {
    if (names_or_notes(s.type, section_name(image, sections, s))) continue;
    hashed += fmt::format("[type {} flags {} size {}]", s.type, s.flags, s.size);
    if (s.type == kNobits || s.offset + s.size > image.size()) continue;  // no bytes in the file
    hashed += without_kernel_names(
        std::string(reinterpret_cast<const char*>(image.data() + s.offset), s.size),
        result.kernels);
  }
  return sha256_hex(hashed);
}

}  // namespace moetune::jit
