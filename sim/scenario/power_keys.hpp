// The scenario's `power:` (node and facility), `run:` (a training run's length) and `cost:` (prices and
// grid carbon) blocks, and the fabric's inventory (servers, NICs, switch ports) they are charged on.
#pragma once

#include "sim/scenario/scenario.hpp"
#include "topologies/fabric_graph.hpp"

namespace memwall::sim {

// Reads the three blocks when present (defaults: the seed's accounting, no projection).
void parse_power_keys(const model::InputNode& root, Scenario& s);

// Servers (NVLink domains), NICs (NIC vertices; without any, the GPUs' own links to a switch) and
// switch ports outside the servers (NVLink ports are the server's, in its host power).
model::FabricInventory fabric_inventory(const topologies::FabricGraph& graph, long long gpus);

} // namespace memwall::sim
