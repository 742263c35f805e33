#include "training_plan.hpp"

#include <algorithm>

namespace memwall::model {

const char* sharding_name(Sharding s) {
  switch (s) {
  case Sharding::None:
    return "none";
  case Sharding::Zero1:
    return "zero1";
  case Sharding::Zero2:
    return "zero2";
  case Sharding::Zero3:
    return "zero3";
  }
  return "?";
}

bool parse_sharding(const std::string& text, Sharding* out) {
  for (Sharding s : {Sharding::None, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3})
    if (text == sharding_name(s)) {
      *out = s;
      return true;
    }
  return false;
}

bool layer_recomputed(const TrainingPlan& plan, long long layer) {
  return plan.activation_recompute && layer % std::max(1LL, plan.recompute_every) == 0;
}

long long recomputed_layers(const TrainingPlan& plan, long long layers) {
  if (!plan.activation_recompute || layers <= 0)
    return 0;
  const long long every = std::max(1LL, plan.recompute_every);
  return (layers + every - 1) / every;
}

} // namespace memwall::model
