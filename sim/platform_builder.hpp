// Turns a validated fabric graph into a SimGrid platform: one host per GPU (speed = peak FLOP/s),
// full-duplex (split-duplex) links. Star fabrics use SimGrid's star zone.
#pragma once

#include "topologies/fabric_graph.hpp"

#include <simgrid/s4u/Host.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace memwall::sim {

struct Platform {
  std::vector<simgrid::s4u::Host*> gpus; // in rank order (names sort the same way)
  std::unordered_map<std::string, double> pj_per_bit; // by SimGrid link name (both directions)
};

Platform build_platform(const topologies::FabricGraph& graph, double gpu_flops_per_s);

} // namespace memwall::sim
