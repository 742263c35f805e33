// The scenario's `training:` block: optimizer sharding, activation recompute (Megatron-Core's
// recompute_modules too), precision and the training state's dtypes, gradient overlap.
#pragma once

#include "model/architecture.hpp"
#include "model/input_node.hpp"
#include "model/training_plan.hpp"

namespace memwall::sim {

model::TrainingPlan parse_training(const model::InputNode& node);

// Refuses (at the item) a recompute module the model does not have: it would free nothing.
void check_recompute_modules(const model::InputNode& list, const model::ArchitectureSpec& arch);

} // namespace memwall::sim
