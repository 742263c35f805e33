// The part of a shared fabric that a simulation of some of its jobs needs: the servers those jobs
// hold, every switch and link between them. A 128-GPU job on a 131,072-GPU fabric then builds a
// platform of its own size (sim/jobs/jobs_run.cpp), with the same routes: a switched fabric's other
// servers are never on a shortest path between two of these.
#pragma once

#include "topologies/fabric_graph.hpp"

#include <vector>

namespace memwall::sim::jobs {

struct FabricPart {
  topologies::FabricGraph graph; // GPUs renumbered 0..n-1 in fabric rank order, servers likewise
  std::vector<long long> rank;   // fabric rank -> rank in `graph`, or -1 when left out
};

// Leaves out the GPUs of every server not in `servers`, then every switch or NIC left with at most
// one link (nothing can cross it). A fabric whose GPUs link to each other directly (a torus, a
// graph) may route through any GPU: it is kept whole.
FabricPart fabric_part(const topologies::FabricGraph& fabric, long long gpus_per_server,
                       const std::vector<long long>& servers);

} // namespace memwall::sim::jobs
