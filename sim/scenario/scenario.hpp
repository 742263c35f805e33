// A validated scenario: what to simulate (model, batch plan, GPU, cluster, fabric, traffic constants).
// Loading is pure parsing and validation (no SimGrid), so `memwall validate` and tests stay fast.
#pragma once

#include "model/architecture.hpp"
#include "model/facility_power.hpp"
#include "model/goodput.hpp"
#include "model/gpu_catalog.hpp"
#include "model/model_catalog.hpp"
#include "model/parallel_layout.hpp"
#include "model/memory_footprint.hpp"
#include "model/traffic.hpp"
#include "model/training_plan.hpp"
#include "model/transformer.hpp"
#include "topologies/fabric_spec.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memwall::sim {

// Input limits (README, "Input limits"): beyond them a run would exhaust memory or never end.
inline constexpr long long kMaxGpus = 131072;
inline constexpr long long kMaxLayers = model::kMaxLayers;
inline constexpr long long kMaxHidden = model::kMaxHidden;
inline constexpr long long kMaxTokens = 1000000000;
inline constexpr long long kMaxMicrobatches = 100000;
inline constexpr long long kMaxSteps = 10000;
inline constexpr double kMaxSimulatedPhases = 5e8; // about 20 minutes of simulation on one core

struct Scenario {
  std::string name;
  std::vector<std::string> warnings; // accepted, but worth saying (printed by run and validate)
  std::string file;
  std::string yaml_text; // the scenario as given
  model::GpuSpec gpu;
  model::TransformerShape shape;   // hidden, layers, seq_len, vocab (the seed's keys), as in arch
  model::ArchitectureSpec arch;    // the whole description; the seed's layer unless the scenario says more
  model::TrafficConstants traffic;
  double tokens_per_microbatch = 0;
  long long microbatches = 1;
  long long steps = 1;
  long long gpus = 1;
  topologies::FabricSpec fabric;
  std::string collective = "ring";      // ring | hierarchical | tree | halving-doubling | auto
  std::string ring_order = "topology";  // topology | rank
  long long channels = 1;               // NCCL's channels per ring (cluster.nccl.channels, else the fabric's)
  model::TrainingPlan training;
  model::ParallelLayout layout;         // data parallelism only unless `parallelism:` says more
  // A layout with groups beyond the data-parallel one (TP, PP, CP, EP, or HSDP's shard groups): its
  // collectives run as NCCL's rings within the groups. Otherwise (pure data parallelism) the gradient
  // sync runs the collective `cluster.collective` chose over all GPUs. One engine runs both
  // (sim/parallel's stage actors; a pure data-parallel job's groups are single GPUs).
  bool grouped_layout() const { return layout.model_parallel() || training.hsdp(); }
  long long global_batch = 0;           // sequences per step, when the batch was given that way (else 0)
  // Timed link events: a bandwidth change, or the link going down (both directions).
  struct LinkEvent {
    double at_s = 0;
    std::string link;         // a fabric link name (memwall topo --dot shows them)
    double bytes_per_s = 0;   // new bandwidth; 0 when the event takes the link down
    bool down = false;
  };
  std::vector<LinkEvent> link_events; // sorted by time
  // Stragglers: per-GPU speed factors (1 = nominal), listed or drawn from a seeded distribution.
  std::map<long long, double> gpu_speed;   // explicit, by rank
  std::string speed_distribution;           // "" | normal | uniform
  double speed_mean = 1, speed_spread = 0;  // normal: mean, stddev; uniform: centre, half-width
  unsigned long long speed_seed = 0;
  bool allow_oom = false;               // run even when the footprint exceeds HBM (flagged)
  model::FacilityPowerSpec power;       // `power:` node and facility figures
  model::FabricInventory inventory;     // servers, NICs, switch ports, counted from the fabric
  model::RunBudgetSpec run;             // `run:` and `cost:` a training run's projection
  model::ReliabilitySpec reliability;   // `reliability:` failures, restarts, spares (issue 31)
  model::CheckpointSpec checkpoint;     // `checkpoint:` size, storage, interval (with reliability)
  // A published measurement of the same run, for validation (0: none).
  double measured_tokens_per_s_per_gpu = 0;
  double measured_node_power_peak_w = 0; // a server's measured power during training (validation-energy)
  double measured_node_power_mean_w = 0;
  // A published peak of device memory (scenarios/validation-memory): torch.cuda.max_memory_allocated
  // or max_memory_reserved, on the pipeline stage its source logs (-1: the worst stage).
  double measured_peak_memory_bytes = 0;
  std::string measured_memory_kind; // allocated | reserved
  long long measured_memory_stage = -1;
  std::string measured_source;
  int line = 0;                         // of the scenario's root, for messages
};

// Fabrics already read and built for a GPU count, by their text: `plan` parses one scenario per
// candidate layout on the same fabric, and reading the fabric file and building its graph was most of
// that work (82% at 3,072 GPUs). Only fabrics without link events are kept (those need the graph).
struct FabricMemo {
  struct Entry {
    topologies::FabricSpec fabric;
    model::FabricInventory inventory;
  };
  std::map<std::string, Entry> entries; // key: the fabric's text, the folder it is read from, the GPUs
};

// A job of a jobs file (sim/jobs): it runs on the file's fabric, never one of its own.
struct SharedFabric {
  topologies::FabricSpec fabric;
  model::FabricInventory inventory;
  bool replace_own = false; // a `base:` scenario's own cluster.fabric is replaced (and said in a warning)
};
// The keys a job adds to a scenario (sim/jobs/jobs_spec.hpp reads them).
inline const std::vector<std::string_view> kJobKeys = {"placement", "placement_unit", "servers", "start"};

Scenario load_scenario(const std::string& path, const model::GpuCatalog& catalog);
Scenario parse_scenario(const model::InputNode& root, const model::GpuCatalog& catalog, FabricMemo* memo = nullptr,
                        const SharedFabric* shared = nullptr);
// A scenario's `model:` (a catalog model with `like:`, the seed's keys, or a described architecture).
model::ArchitectureSpec parse_model(const model::InputNode& node);

// Parameters of the scenario's model (the seed's 12 d^2 L + 2 V d for the seed's layer).
double scenario_params(const Scenario& scenario);

// Each GPU's speed factor, by rank: explicit entries over the distribution over 1. Deterministic for
// a given seed. Factors are clamped to [0.05, 2].
std::vector<double> gpu_speed_factors(const Scenario& scenario);

// Per GPU; with model parallelism, the stage that needs the most (stage_memory: one stage's GPUs,
// activations for the micro-batches its schedule holds at once).
model::MemoryFootprint scenario_footprint(const Scenario& scenario);
model::MemoryFootprint stage_memory(const Scenario& scenario, long long stage);
// Throws InputError with the footprint's numbers when it exceeds HBM and nothing allows it.
void check_memory(const Scenario& scenario, bool allow_oom);

// A file, or every *.yaml / *.yml file of a directory in name order.
std::vector<std::string> scenario_files(const std::string& path, std::vector<std::string>* warnings = nullptr);

// The scenario's model: `arch` as the loader set it, or the seed's layer of `shape` where code built
// or changed the shape alone (unit tests, benchmarks).
inline model::ArchitectureSpec architecture_of(const Scenario& s) {
  const model::ArchitectureSpec& a = s.arch;
  if (a.hidden == s.shape.hidden && model::model_layers(a) == s.shape.layers && a.seq_len == s.shape.seq_len &&
      a.vocab == s.shape.vocab)
    return a;
  return model::seed_architecture(s.shape.hidden, s.shape.layers, s.shape.seq_len, s.shape.vocab);
}

} // namespace memwall::sim
