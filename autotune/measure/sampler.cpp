#include "autotune/measure/sampler.hpp"

namespace moetune::measure {

std::string TunePair::name() const { return stage1.name() + "+" + stage2.name(); }

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::screen: return "screen";
    case Phase::select: return "select";
    case Phase::confirm: return "confirm";
    case Phase::stage_times: return "stage_times";
  }
  return "unknown";
}

std::string_view to_string(TimedUnit unit) {
  switch (unit) {
    case TimedUnit::full: return "full";
    case TimedUnit::stage1: return "stage1";
    case TimedUnit::stage2: return "stage2";
  }
  return "unknown";
}

}  // namespace moetune::measure
