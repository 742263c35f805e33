// A plan file: a scenario whose layout is searched instead of fixed, on one or more fabrics.
//
//   name: "Llama-3 70B on 1,024 H100"
//   base: {gpu: H100-SXM, model: {like: llama3-70b, seq_len: 8192}}   # or a scenario file
//   cluster: {gpus: 1024}                      # any scenario key: merged over the base
//   batch: {global_batch: 1024}
//   fabrics: [dgx-h100-ndr, fat-tree-2to1]     # each planned and reported on its own
//   search:
//     tensor: [1, 2, 4, 8]
//     pipeline: auto                           # divisors of the layer count up to 128
//     virtual_stages: [1, 2, 4]
//     micro_batch: [1, 2, 4]
//     activation_recompute: [none, selective, full]
//     sharding: [zero1, zero3]
//   top: 5                                     # layouts simulated per fabric (--top overrides)
//   headroom: 0.05                             # fraction of HBM kept free (allocator, buffers)
#pragma once

#include "model/input_node.hpp"

#include <optional>
#include <string>
#include <vector>

namespace memwall::plan {

// The searchable keys, in enumeration order (outermost first), and where each lands in a scenario.
struct SearchKey {
  const char* name;
  const char* scenario_key; // dotted
};
inline constexpr SearchKey kSearchKeys[] = {
    {"tensor", "parallelism.tensor"},     {"sequence_parallel", "parallelism.sequence_parallel"},
    {"pipeline", "parallelism.pipeline"}, {"virtual_stages", "parallelism.virtual_stages"},
    {"context", "parallelism.context"},   {"expert", "parallelism.expert"},
    {"micro_batch", "batch.micro_batch"}, {"activation_recompute", "training.activation_recompute"},
    {"sharding", "training.sharding"},
};
inline constexpr size_t kSearchKeyCount = sizeof(kSearchKeys) / sizeof(kSearchKeys[0]);
inline constexpr long long kAutoPipelineMax = 128;
inline constexpr long long kMaxCandidates = 1000000;

struct SearchAxis {
  size_t key = 0;                 // index into kSearchKeys
  std::vector<YAML::Node> values; // as written (pipeline: auto expanded)
  int line = 0;                   // of the key in the plan file
};

struct PlanFabric {
  YAML::Node value;  // as `cluster.fabric` takes it (a relative path made absolute)
  std::string label; // the name it was given, or the fabric's own name
  int line = 0;
};

struct PlanSpec {
  std::string file;
  std::string name;
  YAML::Node scenario; // the base with the plan's scenario keys merged over it
  std::optional<model::InputNode> root;
  std::vector<PlanFabric> fabrics;
  std::vector<SearchAxis> axes; // only the keys the plan searches, in kSearchKeys order
  long long top = 5;
  double headroom = 0;
  // What "best" means among the simulated layouts: time (throughput, or days with failures), energy
  // (facility joules per token) or cost (the run's money; needs run: and cost:). `--objective`.
  std::string objective = "time";
  long long candidates() const; // the full grid's size per fabric
};

PlanSpec load_plan(const std::string& path);

// Where an error in a candidate's scenario stands in the plan file: the search key's line for a
// searched key, the `fabrics:` entry being tried (index `fabric`) for an error about the fabric, else
// the key's line in the plan file (or in its base scenario file).
model::InputError locate_in_plan(const PlanSpec& spec, const model::InputError& error, size_t fabric);

// Whether an error of a candidate's scenario comes from the searched layout (a constraint the
// candidate breaks) rather than from the plan's fixed keys (a bad plan file).
bool is_layout_error(const model::InputError& error);

} // namespace memwall::plan
