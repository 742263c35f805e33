// The scenario's `parallelism:` block and the batch given as sequences (`batch.global_batch`,
// `batch.micro_batch`): parsed and checked against the model, the cluster and the training plan, so
// that everything that cannot run is refused with the numbers before anything is built.
#pragma once

#include "sim/scenario/scenario.hpp"

namespace memwall::sim {

// Reads `parallelism:` (absent: pure data parallelism over every GPU) into s.layout and resolves the
// batch: with `global_batch` and `micro_batch`, s.tokens_per_microbatch and s.microbatches (per
// pipeline, i.e. per data-parallel replica). Needs s.arch, s.gpus, s.fabric and s.training set.
void parse_parallelism(const model::InputNode& root, Scenario& s);

} // namespace memwall::sim
