// Sets up a run (every layout): which GPUs talk (for the platform's routes), the job the actors share
// (groups, each stage's layers, order, gradients and optimizer, message sizes, routes), the actors.
#pragma once

#include "collectives/schedule.hpp"

#include "stage_job.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace memwall::sim::parallel {

// Activations and their gradients travel in 16-bit floats (also with FP8 GEMMs: Transformer Engine
// keeps activations between layers in BF16).
inline constexpr double kActivationBytesPerValue = 2.0;

// A slot is a (data-parallel replica, context rank) pair, replica x c + context rank: the groups of a
// stage are its slots. The ranks of one group (stage, slot), in TP rank order.
std::vector<long long> group_members(const model::ParallelLayout& layout, long long stage, long long slot);

// The (src, dst) rank pairs that exchange data under the layout: TP rings, pipeline neighbours
// (both ways), data-parallel rings per stage and TP rank (a grouped layout's: pure data parallelism
// runs its chosen collective, whose pairs come from its schedule).
// `places`: each rank's server and local rank (collectives::places_of_ranks), for the TP rings' channels.
std::vector<std::pair<long long, long long>> parallel_pairs(const Scenario& scenario,
                                                            const std::vector<collectives::GpuPlace>& places);

// The job, once the platform exists (routes are looked up on it). `data_collective`: pure data
// parallelism's chosen collective, its schedule built for `data_collective_bytes` per GPU
// (StageJob::data_collective); null for a grouped layout, whose data-parallel rings are built here.
std::unique_ptr<StageJob> plan_stage_job(const Scenario& scenario, const StepWork& work, const Platform& platform,
                                         RunRecorder& recorder, const std::vector<collectives::GpuPlace>& places,
                                         const CollectiveRunner* data_collective = nullptr,
                                         double data_collective_bytes = 0);

// One StageActor per TP group, on its slowest GPU, and its two send streams.
void create_stage_actors(StageJob& job);

} // namespace memwall::sim::parallel
