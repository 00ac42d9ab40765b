#include "autotune/runtime/tuned_tables.hpp"

#include <fmt/format.h>

#include "autotune/core/error.hpp"
#include "autotune/runtime/layer_key.hpp"

namespace moetune::runtime {
namespace {

std::string origin_of(const io::FmoeTable& table, const io::FmoeRow& row) {
  return fmt::format("{}:{}", table.file().string(), row.line);
}

}  // namespace

void TunedTables::load(const std::filesystem::path& file) {
  auto table = io::read_fmoe_table(file);
  if (table.kind() != io::FmoeFileKind::tuned) {
    throw Error(fmt::format("{}: a {} table; the runtime reads tuned fMoE tables (AITER's "
                            "tuned_fmoe.csv schema)",
                            file.string(), io::to_string(table.kind())));
  }
  for (auto const& row : table.rows()) {
    for (auto const& loaded : m_tables) {
      if (auto const* other = loaded.find(row.key)) {
        throw Error(fmt::format("{} defines the key of {} ({}): a key may be tuned in one "
                                "table only",
                                origin_of(table, row), origin_of(loaded, *other),
                                row.key.describe()));
      }
    }
  }
  m_tables.push_back(std::move(table));
}

std::map<std::int64_t, RowSource> TunedTables::rows_for(const io::FmoeKey& wanted) const {
  std::map<std::int64_t, RowSource> out;
  for (auto const& table : m_tables) {
    for (auto const& row : table.rows()) {
      if (!row.tuned || !serves_layer(row.key, wanted)) continue;
      // An exact-gfx row wins over one that only matched through an empty gfx.
      auto const it = out.find(row.key.token);
      if (it != out.end() && !it->second.row->key.gfx.empty()) continue;
      out[row.key.token] = RowSource{&row, origin_of(table, row)};
    }
  }
  return out;
}

std::size_t TunedTables::row_count() const {
  std::size_t n = 0;
  for (auto const& t : m_tables) n += t.rows().size();
  return n;
}

}  // namespace moetune::runtime
