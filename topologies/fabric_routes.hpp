// Static routes over a fabric graph: the cheapest paths for bulk transfers (the sum over their links
// of seconds per byte, 1 / bandwidth), spread over equal-cost next hops by choosing, at each branch,
// the link that carries the fewest routes so far (a balanced ECMP). Routes are requested in a fixed
// order, so they are deterministic. Two GPUs of one server thus talk over NVLink, never via NICs.
#pragma once

#include "fabric_graph.hpp"

#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memwall::topologies {

struct RouteHop {
  boost::graph_traits<FabricGraph>::edge_descriptor edge;
  bool forward = true; // traversed from the lower-numbered vertex to the higher one
};

class RouteFinder {
public:
  explicit RouteFinder(const FabricGraph& graph);

  std::vector<RouteHop> route(FabricVertex src, FabricVertex dst);
  // Counts a route chosen elsewhere (an earlier routing that stays) in the link loads that balance
  // the next routes.
  void add_load(const std::vector<RouteHop>& route);
  // Cost (seconds per byte along the cheapest path) from every vertex to `dst` (cached for the
  // last destinations only: the reference is valid until the next call).
  const std::vector<double>& costs_to(FabricVertex dst);
  // Hop counts from every vertex to `dst` (not cached).
  std::vector<int> hops_to(FabricVertex dst) const;

private:
  static constexpr size_t kMaxCachedDestinations = 256;
  const FabricGraph& graph_;
  std::vector<double> edge_cost_; // by edge index
  std::unordered_map<FabricVertex, std::vector<double>> cost_cache_;
  std::map<std::pair<size_t, bool>, long long> load_; // (edge index, direction) -> routes using it
};

// Two path costs equal up to rounding (equal-cost paths summed in another order).
bool same_route_cost(double a, double b);

// Edge index (position in boost::edges order), for per-edge tables.
size_t edge_index(const FabricGraph& graph, boost::graph_traits<FabricGraph>::edge_descriptor e);

} // namespace memwall::topologies
