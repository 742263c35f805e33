#include "choice.hpp"

#include "estimate.hpp"
#include "topologies/fabric_routes.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace memwall::collectives {

std::vector<long long> topology_ring_order(const topologies::FabricGraph& graph) {
  const auto gpus = topologies::gpu_vertices(graph);
  const long long n = static_cast<long long>(gpus.size());
  topologies::RouteFinder routes(graph);
  std::vector<long long> order{0};
  if (n > kGreedyRingLimit) { // one cost sweep from GPU 0: GPUs by cost, then rank
    const std::vector<double> cost = routes.costs_to(gpus[0]);
    std::vector<long long> rest;
    for (long long r = 1; r < n; ++r)
      rest.push_back(r);
    std::stable_sort(rest.begin(), rest.end(),
                     [&](long long a, long long b) { return cost[gpus[size_t(a)]] < cost[gpus[size_t(b)]]; });
    order.insert(order.end(), rest.begin(), rest.end());
    return order;
  }
  std::vector<bool> visited(size_t(n), false);
  visited[0] = true;
  for (long long step = 1; step < n; ++step) {
    const auto& dist = routes.costs_to(gpus[size_t(order.back())]);
    long long best = -1;
    double best_dist = std::numeric_limits<double>::max();
    for (long long r = 0; r < n; ++r)
      if (!visited[size_t(r)] && dist[gpus[size_t(r)]] < best_dist) {
        best_dist = dist[gpus[size_t(r)]];
        best = r;
      }
    visited[size_t(best)] = true;
    order.push_back(best);
  }
  return order;
}

namespace {

Schedule named_schedule(const std::string& name, const std::string& ring_order,
                        const topologies::FabricGraph& graph, double bytes) {
  const long long n = static_cast<long long>(topologies::gpu_vertices(graph).size());
  if (name == "ring") {
    std::vector<long long> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0LL);
    if (ring_order == "topology")
      order = topology_ring_order(graph);
    return ring_schedule(order, bytes);
  }
  if (name == "hierarchical")
    return hierarchical_schedule(n, topologies::gpus_per_node(graph), bytes);
  if (name == "tree")
    return double_tree_schedule(n, bytes);
  if (name == "halving-doubling")
    return halving_doubling_schedule(n, bytes);
  throw std::invalid_argument("unknown collective '" + name + "' (known: " + kCollectiveNames + ")");
}

} // namespace

CollectiveChoice choose_collective(const std::string& name, const std::string& ring_order,
                                   const topologies::FabricGraph& graph, double bytes) {
  if (ring_order != "topology" && ring_order != "rank")
    throw std::invalid_argument("unknown ring order '" + ring_order + "' (topology or rank)");
  CollectiveChoice choice;
  if (name != "auto") {
    choice.schedule = named_schedule(name, ring_order, graph, bytes);
    return choice;
  }
  const long long n = static_cast<long long>(topologies::gpu_vertices(graph).size());
  double best = std::numeric_limits<double>::max();
  for (const char* candidate : {"ring", "hierarchical", "tree", "halving-doubling"}) {
    if (std::string(candidate) == "halving-doubling" && !is_power_of_two(n))
      continue;
    Schedule s = named_schedule(candidate, ring_order, graph, bytes);
    const double t = estimate_seconds(s, graph);
    choice.estimates_s[candidate] = t;
    if (t < best) {
      best = t;
      choice.schedule = std::move(s);
    }
  }
  return choice;
}

} // namespace memwall::collectives
