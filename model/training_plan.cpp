#include "training_plan.hpp"

#include <algorithm>
#include <string>

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

namespace {
constexpr unsigned kRecomputeModules[] = {kRecomputeCoreAttn, kRecomputeLayernorm, kRecomputeMlaUpProj,
                                          kRecomputeMoeAct, kRecomputeMlp, kRecomputeSharedExperts};
}

const char* recompute_module_name(unsigned module) {
  switch (module) {
  case kRecomputeCoreAttn:
    return "core_attn";
  case kRecomputeLayernorm:
    return "layernorm";
  case kRecomputeMlaUpProj:
    return "mla_up_proj";
  case kRecomputeMoeAct:
    return "moe_act";
  case kRecomputeMlp:
    return "mlp";
  case kRecomputeSharedExperts:
    return "shared_experts";
  }
  return "?";
}

bool parse_recompute_module(const std::string& text, unsigned* out) {
  for (unsigned m : kRecomputeModules)
    if (text == recompute_module_name(m)) {
      *out = m;
      return true;
    }
  return false;
}

std::string recompute_module_names(unsigned modules) {
  std::string names;
  for (unsigned m : kRecomputeModules)
    if (modules & m)
      names += (names.empty() ? "" : ", ") + std::string(recompute_module_name(m));
  return names;
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
