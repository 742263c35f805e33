// The scenario's `reliability:` (failure rates per component kind, detection, restart, repair, spares,
// seeds) and `checkpoint:` (size, storage, synchronous or asynchronous, interval) blocks (issue 31).
// Devices are counted from the job: GPUs, HBM stacks (one per GPU), NICs, servers and switches from
// the fabric's inventory, cables split into those with a GPU or NIC at one end (a failure takes a GPU
// off the job: restart) and those between switches (another path where every switch is cabled to two
// or more others: traffic re-routes).
#pragma once

#include "sim/scenario/scenario.hpp"

namespace memwall::sim {

void parse_reliability_keys(const model::InputNode& root, Scenario& s);

// Checkpoint bytes when the scenario does not give them: bf16 weights (2 B) and the fp32 master copy,
// Adam's m and v (12 B) of every parameter, 14 B per parameter (what Megatron-LM's distributed
// checkpoints and torch.distributed.checkpoint save for mixed-precision Adam).
constexpr double kCheckpointBytesPerParam = 14.0;

// A re-routed switch-to-switch cable's default slowdown: the step's exposed communication share over
// (the fewest switch neighbours - 1), the extra time if all of that traffic crossed the switch that
// lost one of its cables (an upper bound). `exposed_share`: 1 - (compute + optimizer) / step.
double reroute_slowdown(const Scenario& s, double exposed_share);

// The run's goodput report for a simulated step, or nothing without a `reliability:` block.
struct GoodputInputs {
  double step_s = 0, facility_j_per_step = 0, idle_facility_w = 0, exposed_share = 0;
};
// With `curves`: goodput at 1/8 to 8 x the interval used and at 1/8 to 8 x the job's GPUs (weak
// scaling: the step time as simulated), each over min(seeds, kCurveSeeds) seeds.
constexpr long long kCurveSeeds = 100;
struct GoodputCurves {
  std::vector<model::CurvePoint> by_interval, by_size;
};
model::GoodputReport scenario_goodput(const Scenario& s, const GoodputInputs& in,
                                      std::vector<model::RunEvent>* first_seed_events = nullptr,
                                      GoodputCurves* curves = nullptr);

} // namespace memwall::sim
