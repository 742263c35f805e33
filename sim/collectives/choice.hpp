// Picks the all-reduce schedule for a scenario: a named algorithm, or `auto`, the cheapest by its
// alpha-beta estimate on the fabric graph among those that apply.
#pragma once

#include "schedule.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/fabric_routes.hpp"

#include <map>
#include <memory>
#include <string>

namespace memwall::collectives {

inline constexpr const char* kCollectiveNames = "ring, hierarchical, tree, halving-doubling, nvls, auto";

struct CollectiveChoice {
  Schedule schedule;
  std::map<std::string, double> estimates_s; // for auto: every candidate's estimate
  // For auto: the finder that routed the estimates, its searches kept (the platform's routes for the
  // chosen schedule need the same searches), and the chosen schedule's routes as estimated: every
  // flow's, round after round, each balanced against those before it (a new finder's).
  std::shared_ptr<topologies::RouteFinder> routes;
  topologies::FlatRoutes flow_routes;
};

// A ring that keeps hops cheap: from rank 0, always on to the unvisited GPU with the cheapest path
// (seconds per byte, then lowest rank). On a star or a packed cluster this is the rank order; on a
// rail-optimised fat-tree it walks a server's GPUs over NVLink and moves to the next server on the
// rail it ends on, so no two ring hops share a link (tests/check_ring_order.py: within 2% of the
// contention-free alpha-beta bound on every catalog fabric at 4,096 GPUs). Each step is a Dijkstra
// that stops at the nearest unvisited GPU, so the walk stays cheap at 16k GPUs.
std::vector<long long> topology_ring_order(const topologies::FabricGraph& graph);

// `ring_order`: "topology" or "rank"; `channels`: NCCL's channels of the ring (channels.hpp);
// `nvls_efficiency`: the fabric's NVLink SHARP (FabricSpec::nvls_efficiency, 0: none). `auto` weighs
// NVLS where it applies (every GPU in one NVLink domain with SHARP).
// Throws std::invalid_argument for an unknown or inapplicable name.
CollectiveChoice choose_collective(const std::string& name, const std::string& ring_order,
                                   const topologies::FabricGraph& graph, double gradient_bytes, long long channels = 1,
                                   double nvls_efficiency = 0);

// Whether NVLS applies to all of `graph`'s GPUs: the fabric has NVLink SHARP and they share one domain.
bool nvls_applies(const topologies::FabricGraph& graph, double nvls_efficiency);

} // namespace memwall::collectives
