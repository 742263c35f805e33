// Turns a validated fabric graph into a SimGrid platform: one host per GPU (speed = peak FLOP/s),
// full-duplex (split-duplex) links. Star fabrics use SimGrid's star zone.
#pragma once

#include "topologies/fabric_graph.hpp"

#include <simgrid/s4u/Host.hpp>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memwall::sim {

struct Platform {
  std::vector<simgrid::s4u::Host*> gpus; // in rank order (names sort the same way)
  // Route epochs: epoch e starts at epoch_start_s[e] (0 for the first) and routes around the links
  // down by then. A GPU whose routes a failure cuts gets a new host (same speed) from that epoch on,
  // whose routes avoid the links down; the others keep theirs. Actors move to the current epoch's
  // host (epoch_gpus[e][rank]) to use its routes.
  std::vector<std::vector<simgrid::s4u::Host*>> epoch_gpus; // [epoch][rank]; [0] is `gpus`
  std::vector<double> epoch_start_s;
  size_t epoch_at(double t_s) const;                       // the epoch in force at t_s
  std::unordered_map<std::string, double> pj_per_bit;      // by SimGrid link name (both directions)
  std::unordered_map<std::string, std::string> link_class; // by SimGrid link name
};

// `pairs`: the (src, dst) ranks that will communicate. A star becomes SimGrid's star zone (every
// route implicit); any other graph a full zone holding static routes for exactly these pairs
// (topologies::RouteFinder: shortest, balanced over equal-cost paths), so large fabrics stay cheap.
// `gpu_flops_per_s`: each GPU's host speed, by rank (peak x its straggler factor).
// `later_graphs`: the fabric after each mid-run link failure (subgraphs of `graph`, starting at
// `later_start_s`), each given its own route epoch; ignored for a star (it has no second path).
Platform build_platform(const topologies::FabricGraph& graph, const std::vector<double>& gpu_flops_per_s,
                        const std::vector<std::pair<long long, long long>>& pairs,
                        const std::vector<topologies::FabricGraph>& later_graphs = {},
                        const std::vector<double>& later_start_s = {});

} // namespace memwall::sim
