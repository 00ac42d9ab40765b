#pragma once
// Requalification (`moe-tune requalify TABLE.csv`): existing tuned rows checked again on the
// device and toolchain in hand — after a compiler or driver upgrade, an edited kernel, a new
// GPU. Each row's bucket is rebuilt from its key and its exact pair (parsed back from
// kernelName1/kernelName2) is put through the unchanged protocol (tune_bucket with a
// BucketPlan::fixed_pair): verification, screen, select, manifest, blocked confirmation with
// the identical-kernel control, gate. The verdict says whether the row still earns its place.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "autotune/io/fmoe_row.hpp"
#include "autotune/search/arch.hpp"
#include "autotune/tune/bucket_tuner.hpp"
#include "autotune/tune/tune_plan.hpp"

namespace moetune::tune {

enum class RequalifyVerdict {
  still_qualifies,      // gate and control passed again
  no_longer_qualifies,  // slower, not significant, or now the default itself (figures given)
  does_not_compile,     // a kernel of the row (or the default) fails to compile
  wrong_result,         // fails a correctness gate
  control_failed,       // the identical-kernel control showed bias twice: no verdict
  failed_to_run,        // launch error or timeout
  not_valid,            // the current rules reject a kernel of the row for this shape/arch
  skipped,              // not re-checked: not our kernels, another device, no shape
};

[[nodiscard]] std::string_view to_string(RequalifyVerdict verdict);

// One row of the table and what requalification makes of it.
struct RequalifyCase {
  std::int64_t line = 0;  // in the table
  io::FmoeKey key;
  std::string kernel1, kernel2;
  std::optional<double> table_us;  // the row's own `us`
  std::optional<measure::BucketPlan> plan;  // the bucket to re-check; empty when skipped
  std::string skip_reason;
};

// Rebuilds the bucket of a tuned row for `arch` with `cu_num` CUs: M is the row's actual_m if
// it has one, else its token; the baseline is the current default for that shape; the
// candidates are the row's two configurations (pruned with the rule if now invalid) and the
// fixed pair is them. Rows of another gfx or cu_num, rows whose kernels are not moe-tune's
// and keys no moe-tune kernel serves are skipped with the reason.
[[nodiscard]] RequalifyCase requalify_case(const io::FmoeRow& row, search::Arch arch,
                                           std::string_view arch_name, std::int64_t cu_num);

struct RequalifyResult {
  RequalifyVerdict verdict = RequalifyVerdict::skipped;
  std::string detail;  // the figures or the reason, one line
  std::optional<BucketResult> bucket;
  std::string device;  // the worker that measured it, with --devices; empty otherwise
};

// The verdict of a bucket tuned with a fixed pair.
[[nodiscard]] RequalifyResult requalify_verdict(BucketResult bucket);

// A row whose units failed to compile: does_not_compile with the compiler's first lines.
[[nodiscard]] RequalifyResult compile_failure(std::string_view unit, std::string_view log_head);

// The report: every row with its verdict and, where measured, the bucket as report.json
// holds it; and the Markdown table (also what stdout shows).
struct RequalifyRow {
  RequalifyCase row;
  RequalifyResult result;
};
[[nodiscard]] nlohmann::json requalify_json(std::span<const RequalifyRow> rows);
[[nodiscard]] std::string requalify_markdown(std::span<const RequalifyRow> rows,
                                             std::string_view title);

}  // namespace moetune::tune
