#pragma once
// The journal of a tuning run (`moe-tune tune --resume`, DESIGN.md §7: "a tuning run that is
// interrupted resumes where it stopped"). An append-only JSON-lines file: line 1 names the
// identity of the run (device, toolchain, search space, kernel sources, input list, gate and
// protocol, sampler), then one line per decided bucket, appended and fsync'ed right after the
// bucket is decided, so a SIGKILL at any moment loses at most the bucket being measured.
// A decided line holds everything the outputs need without measuring again: the bucket's
// report JSON (verbatim), its line of summary.md, and its tuned row as CSV text that parses
// back into the same typed row (so the re-emitted row is byte-identical).
//
// A kill can tear only the last line (an append is not atomic): such a line is ignored with a
// warning and cut off before the next append; a bad line anywhere else is corruption, an error.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/protocol_options.hpp"
#include "autotune/tune/tune_report.hpp"
#include "autotune/tune/tuned_rows.hpp"

namespace moetune::tune {

// Flat "field -> value" pairs (nested values as dotted names, e.g. "protocol.gate.
// min_median_reduction", "kernel_source_sha256.moe_stage1.cuh"), so a mismatch names one field.
using JournalIdentity = std::map<std::string, std::string>;

// The identity of a run: the provenance fields that change verdicts, every protocol option,
// and `extra` (the caller's: input list and its SHA-256, routing, replay model digest, ...).
// Not the command or the git revision: a rebuilt tool with the same kernels, space, toolchain
// and decision code measures and decides the same thing. The decision code's digest is in:
// verdicts of another default-configuration heuristic, gate, protocol or verifier must not be
// mixed into one table.
[[nodiscard]] JournalIdentity journal_identity(const Provenance& provenance,
                                               const ProtocolOptions& options,
                                               const std::map<std::string, std::string>& extra);

// Every field whose value differs (or exists on one side only), one sentence each:
// "protocol.seed: the journal has 1, this run 2". Empty when the identities match.
[[nodiscard]] std::vector<std::string> identity_mismatches(const JournalIdentity& journal,
                                                           const JournalIdentity& now);

struct JournalEntry {
  std::string key;             // io::FmoeKey::describe() of the untuned row
  std::int64_t line = 0;       // in the untuned list
  bool qualified = false;
  std::string summary;         // the bucket's one sentence
  std::optional<io::FmoeRow> row;  // the tuned row of a qualified bucket
  nlohmann::json report;       // the bucket as report.json holds it
  std::string summary_md;      // the bucket's table line of summary.md (no newline)
  std::int64_t journal_line = 0;  // where it was read from (0 for an entry built in memory)
};

// The entry of a decided bucket.
[[nodiscard]] JournalEntry journal_entry(const BucketResult& bucket, const RowContext& rows,
                                         const ProtocolOptions& options,
                                         const Provenance& provenance);

struct JournalContents {
  JournalIdentity identity;
  std::vector<JournalEntry> entries;  // in file order, each key once (the first line wins)
  std::vector<std::string> warnings;  // torn last line, duplicated keys
  std::uintmax_t valid_bytes = 0;     // the length up to the end of the last good line
};

// Reads a journal. Throws moetune::Error naming the file and line when the header is not a
// journal header or a line other than the last is not a decided bucket.
[[nodiscard]] JournalContents read_journal(const std::filesystem::path& file);

// Appends decided buckets, one line each, each write followed by fsync.
class JournalWriter {
 public:
  // A new journal holding only the header (written atomically over any file at `file`).
  static JournalWriter create(const std::filesystem::path& file, const JournalIdentity& identity);
  // Continues an existing journal, first cutting it to `valid_bytes` (drops a torn line).
  static JournalWriter resume(const std::filesystem::path& file, std::uintmax_t valid_bytes);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&& other) noexcept;
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  ~JournalWriter();

  void record(const JournalEntry& entry);
  [[nodiscard]] const std::filesystem::path& file() const { return m_file; }

 private:
  JournalWriter(std::filesystem::path file, int fd) : m_file(std::move(file)), m_fd(fd) {}
  std::filesystem::path m_file;
  int m_fd = -1;
};

}  // namespace moetune::tune
