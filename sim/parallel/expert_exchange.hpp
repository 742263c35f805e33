// The expert-parallel all-to-all of a model-parallel run (issue 27 point 3, issue 34 point 6).
//
// An expert-parallel block is E groups of one stage: E consecutive slots (replica x c + context rank,
// Megatron-Core's EP folded over CP x DP with expert_tensor_parallel = TP); per TP rank its E
// GPUs are one communicator and run an all-to-all after each MoE layer's dispatch and combine. Its
// flows are NCCL's, with PXN on servers with a NIC per GPU (collectives/all_to_all.hpp): the legs.
//
// Posting E (E - 1) legs at once puts every flow of a step into one max-min sharing component, and
// SimGrid's solver then took 80% of a run (EP 64: 8 s a layer). A block whose stand-ins (at most two
// flows per GPU) load every link with the legs' bytes and, alone on the fabric, take exactly the
// legs' time posts the stand-ins instead. Alone means: every flow of a sharing component has the
// same latency and the same duration, so max-min sharing gives each its rate once, for the whole
// transfer, and the time is the longest latency + duration. The only difference left is how the
// block's traffic shares a link with other traffic (a pipeline send beside it): a link's share is
// per flow, and a NIC carries E / servers - 1 legs where it carries one stand-in.
// MEMWALL_SIMULATE_MESSAGES=1 posts the legs always (the reference, tests/sim/test_expert_exchange.cpp).
#pragma once

#include "stage_job.hpp"

#include "collectives/schedule.hpp"

#include <functional>
#include <vector>

namespace memwall::sim::parallel {

// A flow for the check: the links it crosses (indices into a bandwidth list), bytes and route latency.
struct TimedFlow {
  std::vector<size_t> links;
  double bytes = 0, latency_s = 0;
};

// The time `flows`, started together and alone on links of `bandwidth_bytes_per_s`, take under
// max-min sharing, when every flow of each sharing component has the same latency and ends with the
// others (relative 1e-9); negative otherwise (the time then depends on rates changing mid-transfer).
double isolated_time_s(const std::vector<TimedFlow>& flows, const std::vector<double>& bandwidth_bytes_per_s);

// Plans the job's expert-parallel blocks, their legs, what each group's actor posts and each GPU's
// totals. `route` gives a pair's route figures; `counts`: the all-to-alls a layer pass merges (the
// stand-ins must match the legs at each such size).
void plan_expert_exchange(StageJob& job, const std::vector<collectives::GpuPlace>& places,
                          const std::function<RouteFigures(long long, long long)>& route,
                          const std::vector<double>& counts);

// The expert-data-parallel groups of each stage (Megatron-Core's expt_dp_group), as ordered rings of
// ranks: the GPUs at the same place of every expert-parallel block of a stage hold the same experts,
// and their expert gradients are reduced over them, not over all the stage's replicas. A stage's list
// is empty when each block is the whole stage (every GPU holds its own experts: nothing to reduce).
std::vector<std::vector<std::vector<long long>>> expert_data_rings(const model::ParallelLayout& l);

// The (src, dst) pairs the all-to-alls of a layout use: legs and stand-ins (routes to build).
std::vector<std::pair<long long, long long>> expert_exchange_pairs(const Scenario& s,
                                                                   const std::vector<collectives::GpuPlace>& places);

} // namespace memwall::sim::parallel
