#pragma once
// The tuned tables a runtime context has loaded, read with the tool's strict reader
// (io::read_fmoe_table): a table moe-tune would refuse is refused here too, and a key defined
// by two tables is refused (which row would win would otherwise depend on load order).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "autotune/io/fmoe_table.hpp"

namespace moetune::runtime {

// One row and where it came from, for reports ("file.csv:12").
struct RowSource {
  const io::FmoeRow* row = nullptr;
  std::string origin;
};

class TunedTables {
 public:
  // Throws InputError / FileError for an unreadable or invalid file, and moetune::Error for a
  // table that is not a tuned fMoE table or repeats a key of a table already loaded.
  void load(const std::filesystem::path& file);

  // Every row serving the layer key `wanted` (serves_layer), by token.
  [[nodiscard]] std::map<std::int64_t, RowSource> rows_for(const io::FmoeKey& wanted) const;
  [[nodiscard]] std::size_t table_count() const { return m_tables.size(); }
  [[nodiscard]] std::size_t row_count() const;

 private:
  // RowSource points into these: use a rows_for() result before the next load().
  std::vector<io::FmoeTable> m_tables;
};

}  // namespace moetune::runtime
