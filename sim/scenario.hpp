// A validated scenario: what to simulate (model, batch plan, GPU, cluster, fabric, traffic constants).
// Loading is pure parsing and validation (no SimGrid), so `memwall validate` and tests stay fast.
#pragma once

#include "model/gpu_catalog.hpp"
#include "model/memory_footprint.hpp"
#include "model/traffic.hpp"
#include "model/training_plan.hpp"
#include "model/transformer.hpp"
#include "topologies/fabric_spec.hpp"

#include <string>
#include <vector>

namespace memwall::sim {

struct Scenario {
  std::string name;
  std::string file;
  std::string yaml_text; // the scenario as given
  model::GpuSpec gpu;
  model::TransformerShape shape;
  model::TrafficConstants traffic;
  double tokens_per_microbatch = 0;
  long long microbatches = 1;
  long long steps = 1;
  long long gpus = 1;
  topologies::FabricSpec fabric;
  std::string collective = "ring";      // ring | hierarchical | tree | halving-doubling | auto
  std::string ring_order = "topology";  // topology | rank
  model::TrainingPlan training;
  bool allow_oom = false;               // run even when the footprint exceeds HBM (flagged)
  int line = 0;                         // of the scenario's root, for messages
};

Scenario load_scenario(const std::string& path, const model::GpuCatalog& catalog);
Scenario parse_scenario(const model::InputNode& root, const model::GpuCatalog& catalog);

model::MemoryFootprint scenario_footprint(const Scenario& scenario);
// Throws InputError with the footprint's numbers when it exceeds HBM and nothing allows it.
void check_memory(const Scenario& scenario, bool allow_oom);

// A file, or every *.yaml / *.yml file of a directory in name order.
std::vector<std::string> scenario_files(const std::string& path);

} // namespace memwall::sim
