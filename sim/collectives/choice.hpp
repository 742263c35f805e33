// Picks the all-reduce schedule for a scenario: a named algorithm, or `auto`, the cheapest by its
// alpha-beta estimate on the fabric graph among those that apply.
#pragma once

#include "schedule.hpp"
#include "topologies/fabric_graph.hpp"

#include <map>
#include <string>

namespace memwall::collectives {

inline constexpr const char* kCollectiveNames = "ring, hierarchical, tree, halving-doubling, auto";

struct CollectiveChoice {
  Schedule schedule;
  std::map<std::string, double> estimates_s; // for auto: every candidate's estimate
};

// A ring that keeps hops cheap: from rank 0, always on to the unvisited GPU with the cheapest path
// (seconds per byte, then lowest rank). On a star or a packed cluster this is the rank order. Above
// kGreedyRingLimit GPUs (the greedy walk costs N shortest-path sweeps), GPUs are ordered by their
// cost from GPU 0 instead, which groups servers and leaves the same way on star and fat-tree fabrics.
inline constexpr long long kGreedyRingLimit = 1024;
std::vector<long long> topology_ring_order(const topologies::FabricGraph& graph);

// `ring_order`: "topology" or "rank". Throws std::invalid_argument for an unknown or inapplicable name.
CollectiveChoice choose_collective(const std::string& name, const std::string& ring_order,
                                   const topologies::FabricGraph& graph, double gradient_bytes);

} // namespace memwall::collectives
