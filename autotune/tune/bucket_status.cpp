#include "autotune/tune/bucket_status.hpp"

#include "autotune/core/enum_names.hpp"

namespace moetune::tune {
namespace {
constexpr EnumNames<BucketStatus, 4> kStatusNames{{
    {BucketStatus::qualified, "qualified"},
    {BucketStatus::not_qualified, "not_qualified"},
    {BucketStatus::baseline_failed, "baseline_failed"},
    {BucketStatus::setup_failed, "setup_failed"},
}};
}  // namespace

std::string_view to_string(BucketStatus status) { return name_in(kStatusNames, status); }

std::optional<BucketStatus> parse_bucket_status(std::string_view text) {
  return value_in(kStatusNames, text);
}

}  // namespace moetune::tune
