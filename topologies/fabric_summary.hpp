// What `memwall topo` reports about a fabric graph, and its GraphViz export.
#pragma once

#include "fabric_graph.hpp"

#include <ostream>

namespace memwall::topologies {

struct FabricSummary {
  long long gpus = 0, switches = 0, nics = 0, links = 0;
  long long gpus_per_node = 1;
  int diameter_hops = 0;                  // longest shortest path between two GPUs
  double min_injection_bytes_per_s = 0;   // per GPU, per direction (sum of its links)
  double max_injection_bytes_per_s = 0;
  double bisection_bound_bytes_per_s = 0; // max flow between the two rank halves (>= the bisection)
  double total_link_bytes_per_s = 0;
};

FabricSummary summarise_fabric(const FabricGraph& graph);
void print_fabric_summary(std::ostream& out, const FabricSummary& s);
void write_dot(std::ostream& out, const FabricGraph& graph);

} // namespace memwall::topologies
