// The planner's first two stages, per fabric: every layout of the search grid, each checked against
// the scenario's constraints (the loader's own checks: divisibility, batch, limits) and against HBM
// (memory per GPU with the plan's headroom) before any cost; then the fast estimate of each layout
// that fits, ranked. No SimGrid: the simulation of the best ones is the caller's third stage.
#pragma once

#include "estimate.hpp"
#include "plan_spec.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace memwall::plan {

struct Candidate {
  size_t fabric = 0;
  long long index = 0;             // position in the fabric's grid
  std::vector<std::string> values; // per searched axis, as compact YAML
  std::string scenario_yaml;       // runnable as it is
  std::string layout;              // "TP 8 (SP) PP 4 v2 CP 1 EP 1 DP 32, mb 1, recompute full, zero1"
  model::ParallelLayout parallel;
  long long micro_batch = 0; // sequences (0 when the batch is given in tokens)
  std::string recompute, sharding;
  double memory_bytes = 0, capacity_bytes = 0;
  double model_flops_per_token = 0; // without recompute, for MFU
  double peak_flops_per_s = 0;
  StepEstimate estimate;
};

struct FabricPlan {
  std::string label;
  long long layouts = 0;                // in the grid
  long long broken = 0;                 // break a constraint
  std::map<std::string, long long> why; // constraint -> layouts that break it (first words of the reason)
  long long too_big = 0;                // do not fit HBM with the headroom
  std::vector<Candidate> ranked;        // those that fit, fastest estimate first
  bool has_closest = false;             // the layout closest to fitting, when none fits
  Candidate closest;
  double shortfall_bytes = 0; // its footprint over the usable HBM
};

// Progress: called after each fabric's enumeration.
using PlanProgress = std::function<void(const FabricPlan&)>;

// Throws InputError, located in the plan file, for a fixed key of the plan that no layout can get
// past (an unknown model, a fabric that cannot hold the GPUs).
std::vector<FabricPlan> enumerate_and_estimate(const PlanSpec& spec, const PlanProgress& progress);

} // namespace memwall::plan
