// The scenario's `parallelism:` block and the batch given as sequences (`batch.global_batch`,
// `batch.micro_batch`): parsed and checked against the model, the cluster and the training plan, so
// that everything that cannot run is refused with the numbers before anything is built.
#pragma once

#include "sim/scenario/scenario.hpp"

#include <optional>
#include <string>

namespace memwall::sim {

// What a layout is checked against, as plain numbers.
struct LayoutInputs {
  long long gpus = 1;
  const model::ArchitectureSpec* arch = nullptr;
  model::Sharding sharding = model::Sharding::None;
  long long global_batch = 0; // sequences; 0: the batch is given in tokens
  long long micro_batch = 1;  // sequences
  long long microbatches = 1; // per replica, when the batch is given in tokens
  long long shard_group = 0;  // HSDP's (training.shard_group), 0 without
};

// Why a layout cannot run: the key it is reported under (`parallelism.tensor`, `batch.global_batch`,
// ...) and the reason with its numbers.
struct LayoutProblem {
  std::string key;
  std::string reason;
};

// The `parallelism:` block as written (degrees, schedule, placement, stage_layers if given), each
// value checked for its type and limit; what the values must satisfy together is check_layout's.
model::ParallelLayout read_layout(const model::InputNode& node);

// Every check of a layout that needs only numbers, in the order the loader reports them: the degrees
// against the GPUs, the model's heads, widths, sequence, experts and layers, the pipeline's stages,
// the sharding the model-parallel engine runs, and the batch. Sets l.data, l.stage_layers (Megatron's
// split unless given) and *microbatches (per replica). The scenario loader and `plan`'s search call
// this one function, so that a layout the search drops is the one the loader would refuse, and for
// the same reason; the search calls it before building anything.
std::optional<LayoutProblem> check_layout(model::ParallelLayout& l, const LayoutInputs& in, long long* microbatches);

// Reads `parallelism:` (absent: pure data parallelism over every GPU) into s.layout and resolves the
// batch: with `global_batch` and `micro_batch`, s.tokens_per_microbatch and s.microbatches (per
// pipeline, i.e. per data-parallel replica). Needs s.arch, s.gpus, s.fabric and s.training set.
void parse_parallelism(const model::InputNode& root, Scenario& s);

} // namespace memwall::sim
