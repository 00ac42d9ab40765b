#pragma once
// The Sampler's calls and answers as JSON, for the line protocol between `moe-tune tune` and
// its worker process (remote_sampler.hpp, sampler_server.hpp). Both ends are the same binary,
// so enums of the bucket key and shape travel as their numbers; kernel configurations travel
// as their names (search::parse_kernel_name), the one form that is already checked to round
// trip. Doubles that JSON cannot hold (inf, nan: a verification that saw a NaN reports an
// infinite distance) travel as the strings "inf", "-inf" and "nan".
#include <nlohmann/json.hpp>

#include "autotune/measure/sampler.hpp"
#include "autotune/measure/bucket_plan.hpp"

namespace moetune::measure::wire {

// Only what a Sampler reads of a bucket: key, line, M, shape, baseline and the candidates.
[[nodiscard]] nlohmann::json to_json(const BucketPlan& bucket);
[[nodiscard]] BucketPlan bucket_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json to_json(const TunePair& pair);
[[nodiscard]] TunePair pair_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json to_json(const BlockSpec& block);
[[nodiscard]] BlockSpec block_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json to_json(const Preparation& preparation);
[[nodiscard]] Preparation preparation_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json to_json(const Verification& verification);
[[nodiscard]] Verification verification_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json to_json(const SamplerError& error);
[[nodiscard]] SamplerError sampler_error_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json number(double value);
[[nodiscard]] double number_from_json(const nlohmann::json& j);

[[nodiscard]] TimedUnit parse_unit(std::string_view text);
[[nodiscard]] Outcome outcome_from_json(const nlohmann::json& j);

}  // namespace moetune::measure::wire
