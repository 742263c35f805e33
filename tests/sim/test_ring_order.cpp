// The topology-aware ring order: the fast walk (a Dijkstra per step that stops at the nearest
// unvisited GPU, with leaf GPUs offered one per switch) must give exactly the greedy walk that a full
// shortest-path sweep per step gives, on every fabric kind, with rail-optimised, packed, per-node
// NICs and multi-tier layouts. The brute force below is written here, from RouteFinder::costs_to.
#include "collectives/choice.hpp"
#include "topologies/fabric_loader.hpp"
#include "topologies/fabric_routes.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <string>

using namespace memwall;

namespace {

std::vector<long long> brute_force_ring(const topologies::FabricGraph& graph) {
  const auto gpus = topologies::gpu_vertices(graph);
  topologies::RouteFinder routes(graph);
  std::vector<long long> order{0};
  std::vector<bool> visited(gpus.size(), false);
  visited[0] = true;
  while (order.size() < gpus.size()) {
    const std::vector<double> cost = routes.costs_to(gpus[size_t(order.back())]);
    long long best = -1;
    for (size_t r = 0; r < gpus.size(); ++r)
      if (!visited[r] && (best < 0 || cost[gpus[r]] < cost[gpus[size_t(best)]]))
        best = static_cast<long long>(r);
    visited[size_t(best)] = true;
    order.push_back(best);
  }
  return order;
}

topologies::FabricSpec cluster(long long per_node, long long leaf_ports, double oversubscription, bool rail,
                               bool nic_per_gpu, int tiers = 2) {
  topologies::FabricSpec f;
  f.kind = "cluster";
  f.cluster.gpus_per_node = per_node;
  f.cluster.nvlink = {450e9, 1e-6, 0};
  f.cluster.nic = {50e9, 1e-6, 0};
  f.cluster.leaf_ports = leaf_ports;
  f.cluster.oversubscription = oversubscription;
  f.cluster.rail_optimized = rail;
  f.cluster.nic_per_gpu = nic_per_gpu;
  f.cluster.tiers = tiers;
  f.cluster.pod_leaves = 2;
  return f;
}

} // namespace

TEST_CASE("ring order: the fast walk is the greedy nearest-GPU walk on every fabric kind") {
  struct Case {
    std::string what;
    topologies::FabricSpec spec;
    long long gpus;
  };
  std::vector<Case> cases;
  topologies::FabricSpec star;
  star.kind = "star";
  star.link_bytes_per_s = 25e9;
  cases.push_back({"star", star, 96});
  topologies::FabricSpec node = star;
  node.kind = "nvlink-node";
  cases.push_back({"nvlink-node", node, 72});
  cases.push_back({"rail-optimised, 4-port leaves", cluster(8, 4, 1, true, true), 256});
  cases.push_back({"packed 2:1", cluster(8, 16, 2, false, true), 256});
  cases.push_back({"one NIC per server", cluster(4, 4, 1, false, false), 128});
  cases.push_back({"three tiers, rail-optimised", cluster(8, 4, 1, true, true, 3), 256});
  topologies::FabricSpec torus;
  torus.kind = "torus";
  torus.torus.dims = {4, 3, 5};
  torus.torus.link = {45e9, 1e-6, 0};
  cases.push_back({"torus 4x3x5", torus, 60});
  topologies::FabricSpec dragonfly;
  dragonfly.kind = "dragonfly";
  dragonfly.dragonfly = {9, 4, 2, 2, {25e9, 1e-6, 0}, {25e9, 0.5e-6, 0}, {25e9, 1e-6, 0}};
  cases.push_back({"dragonfly 9 x 4 x 2", dragonfly, 72});
  for (const Case& c : cases) {
    INFO(c.what);
    const topologies::FabricGraph graph = topologies::build_fabric_graph(c.spec, c.gpus);
    CHECK(collectives::topology_ring_order(graph) == brute_force_ring(graph));
  }
}
