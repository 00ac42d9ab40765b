#include "autotune/runtime/bucket_choice.hpp"

#include <fmt/format.h>

#include "autotune/runtime/runtime_error.hpp"
#include "autotune/search/default_config.hpp"
#include "autotune/search/validity.hpp"

namespace moetune::runtime {
namespace {

// Everything a compiled kernel takes as given about the layer that the name carries.
std::optional<std::string> fits_layer(const search::KernelConfig& c, int stage,
                                      const moe::MoeShape& shape, search::Arch arch) {
  if (c.stage != stage) {
    return fmt::format("kernelName{} '{}' is a stage-{} kernel", stage, c.name(), c.stage);
  }
  if (c.dtype != shape.dtype) {
    return fmt::format("'{}' is for {}, the layer is {}", c.name(), moe::to_string(c.dtype),
                       moe::to_string(shape.dtype));
  }
  if (c.dtype == moe::DtypePath::a8w4 && c.fp8 != shape.fp8_flavor) {
    return fmt::format("'{}' computes in another e4m3 flavour than {} uses", c.name(),
                       search::to_string(arch));
  }
  if (c.gate_up != shape.gate_up) {
    return fmt::format("'{}' expects {} gate/up rows, the layer has {}", c.name(),
                       moe::to_string(c.gate_up), moe::to_string(shape.gate_up));
  }
  if (c.doweight_stage1 != shape.doweight_stage1) {
    return fmt::format("'{}' has doweight_stage1={}, the layer {}", c.name(),
                       c.doweight_stage1 ? 1 : 0, shape.doweight_stage1 ? 1 : 0);
  }
  if (auto const broken = search::check_config(c, arch, shape)) {
    return fmt::format("'{}' is not valid for this layer on {}: {}", c.name(),
                       search::to_string(arch), *broken);
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(ChoiceSource source) {
  switch (source) {
    case ChoiceSource::tuned_row: return "tuned_row";
    case ChoiceSource::default_no_row: return "default_no_row";
    case ChoiceSource::default_row_rejected: return "default_row_rejected";
  }
  return "?";
}

std::optional<std::string> row_problem(const io::TunedResult& tuned, const moe::MoeShape& shape,
                                       search::Arch arch, search::KernelConfig& stage1,
                                       search::KernelConfig& stage2) {
  try {
    stage1 = search::parse_kernel_name(tuned.kernel_name1);
    stage2 = search::parse_kernel_name(tuned.kernel_name2);
  } catch (const Error& e) {
    // Most often a row of AITER's own kernels (CK / asm names): not a moe-tune kernel.
    return fmt::format("not a moe-tune kernel: {}", e.what());
  }
  if (auto p = fits_layer(stage1, 1, shape, arch)) return p;
  if (auto p = fits_layer(stage2, 2, shape, arch)) return p;
  if (auto why = search::pair_violation(stage1, stage2)) return why;
  if (tuned.block_m != stage1.block_m) {
    return fmt::format("block_m column {} differs from the kernels' block_m {}", tuned.block_m,
                       stage1.block_m);
  }
  return std::nullopt;
}

std::vector<BucketChoice> choose_buckets(const LayerSpec& layer, search::Arch arch,
                                         const DeviceIdentity& device, const TunedTables& tables,
                                         const CompileCheck& compile) {
  auto const rows = tables.rows_for(layer_key(layer, device, 1));
  std::vector<BucketChoice> out;
  for (auto const tokens : bucket_list(layer.max_tokens)) {
    BucketChoice choice;
    choice.tokens = tokens;
    if (auto const it = rows.find(tokens); it != rows.end()) {
      choice.row_origin = it->second.origin;
      auto problem = row_problem(*it->second.row->tuned, layer.shape, arch, choice.stage1,
                                 choice.stage2);
      if (!problem) {
        for (auto const* c : {&choice.stage1, &choice.stage2}) {
          if (auto failed = compile(*c)) {
            problem = fmt::format("'{}' did not compile: {}", c->name(), *failed);
            break;
          }
        }
      }
      if (!problem) {
        choice.source = ChoiceSource::tuned_row;
        out.push_back(std::move(choice));
        continue;
      }
      choice.source = ChoiceSource::default_row_rejected;
      choice.rejection = std::move(*problem);
    }
    // The default the tuner measured each row against, chosen at the bucket's token count.
    auto const defaults = search::default_config(layer.shape, arch, tokens);
    choice.stage1 = defaults.stage1;
    choice.stage2 = defaults.stage2;
    for (auto const* c : {&choice.stage1, &choice.stage2}) {
      if (auto const broken = search::check_config(*c, arch, layer.shape)) {
        // make_valid could not fit the shape (e.g. more experts than the sort handles).
        throw RuntimeError(ErrorKind::shape,
                           fmt::format("no kernel of moe-tune runs {} on {}: the default '{}' "
                                       "breaks a rule: {}",
                                       moe::to_string(layer.shape), search::to_string(arch),
                                       c->name(), *broken));
      }
      if (auto failed = compile(*c)) {
        throw RuntimeError(ErrorKind::compile,
                           fmt::format("the default configuration '{}' for {} tokens did not "
                                       "compile: {}",
                                       c->name(), tokens, *failed));
      }
    }
    out.push_back(std::move(choice));
  }
  return out;
}

}  // namespace moetune::runtime
