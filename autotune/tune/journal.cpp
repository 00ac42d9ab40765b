#include "autotune/tune/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "autotune/core/atomic_file.hpp"
#include "autotune/core/error.hpp"
#include "autotune/io/csv_table.hpp"
#include "autotune/io/fmoe_schema.hpp"
#include "autotune/io/fmoe_table.hpp"
#include "autotune/io/fmoe_writer.hpp"
#include "autotune/tune/markdown_summary.hpp"

namespace moetune::tune {

namespace {

constexpr int journal_version = 1;
constexpr const char* header_tag = "moe_tune_journal";

void flatten(const nlohmann::json& j, const std::string& prefix, JournalIdentity& out) {
  if (j.is_object()) {
    for (auto const& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_string()) {
    out[prefix] = j.get<std::string>();
  } else {
    out[prefix] = j.dump();  // numbers as JSON writes them: exact for doubles
  }
}

// The row as the CSV text of a one-row tuned table (AITER's newest header): the reader's own
// checks apply when it comes back, and its typed values format to the same bytes again.
std::string row_csv(const io::FmoeRow& row) {
  std::vector<std::string> columns;
  for (auto const name : io::newest_header(io::FmoeFileKind::tuned)) columns.emplace_back(name);
  auto const cells = io::format_row_cells(row, columns, "journal");
  std::string text;
  for (std::size_t i = 0; i < columns.size(); ++i) text += (i ? "," : "") + columns[i];
  text += "\n";
  for (std::size_t i = 0; i < cells.size(); ++i) text += (i ? "," : "") + cells[i];
  return text + "\n";
}

io::FmoeRow row_from_csv(const std::string& text, const std::filesystem::path& file,
                         std::int64_t line) {
  auto const csv = io::parse_csv(text, file, io::fmoe_csv_options());
  auto parsed = io::parse_fmoe_csv(csv);
  if (parsed.error_count() != 0 || parsed.table.rows().size() != 1) {
    std::string why = parsed.diagnostics.empty() ? "not one row" : parsed.diagnostics[0].message;
    throw Error(fmt::format("{}:{}: the journaled tuned row does not read back: {}",
                            file.string(), line, why));
  }
  io::FmoeRow row = parsed.table.rows().front();
  // A row built in code: written from its typed fields in the target file's column order.
  row.cells.clear();
  row.columns.clear();
  row.line = 0;
  row.raw.clear();
  row.missing_fields = 0;
  return row;
}

// The table line of one bucket in summary.md: the last line of a one-bucket summary.
std::string summary_line(const BucketResult& b, const ProtocolOptions& options,
                         const Provenance& provenance) {
  auto text = markdown_summary(std::span<const BucketResult>(&b, 1), options, provenance);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  auto const pos = text.rfind('\n');
  return pos == std::string::npos ? text : text.substr(pos + 1);
}

[[noreturn]] void fail_errno(const std::filesystem::path& file, const char* action) {
  throw FileError(file, action, std::strerror(errno));
}

void write_all(int fd, std::string_view data, const std::filesystem::path& file) {
  while (!data.empty()) {
    auto const n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(file, "append to");
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

int open_append(const std::filesystem::path& file) {
  int const fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) fail_errno(file, "open");
  return fd;
}

}  // namespace

JournalIdentity journal_identity(const Provenance& p, const ProtocolOptions& options,
                                 const std::map<std::string, std::string>& extra) {
  nlohmann::json j = {{"device", p.device},
                      {"arch", p.arch},
                      {"cu_num", p.cu_num},
                      {"driver", p.driver},
                      {"runtime_compiler", p.runtime_compiler},
                      {"search_space_sha256", p.search_space_sha256},
                      {"kernel_source_sha256", p.kernel_source_sha256},
                      {"decision_code_sha256", p.decision_code_sha256},
                      {"sampler", p.sampler},
                      {"protocol", to_json(options)}};
  // The stated calibration changes no decision: a run resumed with another (or none) is the
  // same run.
  j["protocol"].erase("false_qualification_rate");
  j["protocol"].erase("calibration");
  j["protocol"].erase("calibrated_bucket");
  JournalIdentity out;
  flatten(j, "", out);
  for (auto const& [k, v] : extra) out[k] = v;
  return out;
}

std::vector<std::string> identity_mismatches(const JournalIdentity& journal,
                                             const JournalIdentity& now) {
  std::vector<std::string> out;
  std::set<std::string> fields;
  for (auto const& [k, v] : journal) fields.insert(k);
  for (auto const& [k, v] : now) fields.insert(k);
  for (auto const& f : fields) {
    auto const a = journal.find(f);
    auto const b = now.find(f);
    std::string const old_value = a == journal.end() ? "(absent)" : "'" + a->second + "'";
    std::string const new_value = b == now.end() ? "(absent)" : "'" + b->second + "'";
    if (old_value != new_value) {
      out.push_back(fmt::format("{}: the journal has {}, this run {}", f, old_value, new_value));
    }
  }
  return out;
}

JournalEntry journal_entry(const BucketResult& bucket, const RowContext& rows,
                           const ProtocolOptions& options, const Provenance& provenance) {
  JournalEntry e;
  e.key = bucket.key.describe();
  e.line = bucket.line;
  e.qualified = bucket.qualified;
  e.summary = bucket.summary;
  e.row = tuned_row(bucket, rows);
  e.report = to_json(bucket);
  e.summary_md = summary_line(bucket, options, provenance);
  return e;
}

JournalContents read_journal(const std::filesystem::path& file) {
  auto const text = read_file(file);
  JournalContents out;
  std::set<std::string> seen;
  std::size_t pos = 0;
  std::int64_t number = 0;
  while (pos < text.size()) {
    ++number;
    auto const end = text.find('\n', pos);
    bool const complete = end != std::string::npos;
    std::string_view const line(text.data() + pos, (complete ? end : text.size()) - pos);
    bool const last = !complete || end + 1 == text.size();
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    bool const good = complete && !j.is_discarded() && j.is_object();
    if (!good) {
      if (last && number > 1) {
        // What a SIGKILL mid-append leaves: the bucket was not decided as far as we know.
        out.warnings.push_back(fmt::format(
            "{}:{}: torn last line ({} bytes, written when the run was killed) ignored; its "
            "bucket is measured again",
            file.string(), number, line.size()));
        break;
      }
      throw Error(fmt::format("{}:{}: not a moe-tune journal line{}", file.string(), number,
                              number == 1 ? " (the header is missing or torn: delete the file "
                                            "and start again)"
                                          : " (the file is damaged in the middle)"));
    }
    if (number == 1) {
      if (!j.contains(header_tag) || !j.contains("identity")) {
        throw Error(fmt::format("{}:1: not a moe-tune journal header", file.string()));
      }
      if (j.at(header_tag) != journal_version) {
        throw Error(fmt::format("{}:1: journal version {} (this moe-tune reads version {})",
                                file.string(), j.at(header_tag).dump(), journal_version));
      }
      auto const& identity = j.at("identity");
      if (!identity.is_object()) {
        throw Error(fmt::format("{}:1: the journal header's identity is not an object", file.string()));
      }
      for (auto const& [k, v] : identity.items()) {
        // Every identity value is written as a string; anything else is a damaged header
        // (found by test/fuzz/fuzz_journal.cpp: a number here escaped as a json exception).
        if (!v.is_string()) {
          throw Error(fmt::format("{}:1: identity field '{}' is not a string in the journal header",
                                  file.string(), k));
        }
        out.identity[k] = v.get<std::string>();
      }
    } else {
      try {
        JournalEntry e;
        e.key = j.at("key").get<std::string>();
        e.line = j.at("line").get<std::int64_t>();
        e.qualified = j.at("qualified").get<bool>();
        e.summary = j.at("summary").get<std::string>();
        e.summary_md = j.at("summary_md").get<std::string>();
        e.report = j.at("report");
        e.journal_line = number;
        if (auto const& r = j.at("row"); !r.is_null()) {
          e.row = row_from_csv(r.get<std::string>(), file, number);
        }
        if (!seen.insert(e.key).second) {
          // Never emitted twice: the first decision stands.
          out.warnings.push_back(fmt::format("{}:{}: bucket {} is already decided earlier in "
                                             "the journal; this line is ignored",
                                             file.string(), number, e.key));
        } else {
          out.entries.push_back(std::move(e));
        }
      } catch (const nlohmann::json::exception& ex) {
        if (last) {
          out.warnings.push_back(fmt::format("{}:{}: incomplete last line ignored ({})",
                                             file.string(), number, ex.what()));
          break;
        }
        throw Error(fmt::format("{}:{}: not a decided bucket: {}", file.string(), number,
                                ex.what()));
      }
    }
    pos = end + 1;
    out.valid_bytes = pos;
  }
  if (number == 0) throw Error(fmt::format("{}: empty journal (no header)", file.string()));
  return out;
}

JournalWriter JournalWriter::create(const std::filesystem::path& file,
                                    const JournalIdentity& identity) {
  nlohmann::json header = {{header_tag, journal_version}, {"identity", identity}};
  // The header is published whole (temporary file + rename): a journal never lacks it.
  write_file_atomically(file, header.dump() + "\n");
  return JournalWriter(file, open_append(file));
}

JournalWriter JournalWriter::resume(const std::filesystem::path& file,
                                    std::uintmax_t valid_bytes) {
  // A torn line left in place would glue itself to the next appended line.
  if (std::filesystem::file_size(file) != valid_bytes) {
    std::filesystem::resize_file(file, valid_bytes);
  }
  return JournalWriter(file, open_append(file));
}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept
    : m_file(std::move(other.m_file)), m_fd(std::exchange(other.m_fd, -1)) {}

JournalWriter& JournalWriter::operator=(JournalWriter&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_file = std::move(other.m_file);
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

JournalWriter::~JournalWriter() {
  if (m_fd >= 0) ::close(m_fd);
}

void JournalWriter::record(const JournalEntry& e) {
  nlohmann::json j = {{"key", e.key},
                      {"line", e.line},
                      {"qualified", e.qualified},
                      {"summary", e.summary},
                      {"row", e.row ? nlohmann::json(row_csv(*e.row)) : nlohmann::json()},
                      {"summary_md", e.summary_md},
                      {"report", e.report}};
  // One write of the whole line, then fsync: once record returns, the decision survives a
  // kill or a power cut.
  write_all(m_fd, j.dump() + "\n", m_file);
  if (::fsync(m_fd) != 0) fail_errno(m_file, "fsync");
}

}  // namespace moetune::tune
