// Static routes over a fabric graph: shortest paths (in hops), spread over equal-cost next hops by
// choosing, at each branch, the link that carries the fewest routes so far (a balanced ECMP). Routes
// are requested in a fixed order, so they are deterministic.
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
  explicit RouteFinder(const FabricGraph& graph) : graph_(graph) {}

  std::vector<RouteHop> route(FabricVertex src, FabricVertex dst);
  // Hop distances from every vertex to `dst` (cached).
  const std::vector<int>& distances_to(FabricVertex dst);

private:
  const FabricGraph& graph_;
  std::unordered_map<FabricVertex, std::vector<int>> distance_cache_;
  std::map<std::pair<size_t, bool>, long long> load_; // (edge index, direction) -> routes using it
};

// Edge index (position in boost::edges order), for per-edge tables.
size_t edge_index(const FabricGraph& graph, boost::graph_traits<FabricGraph>::edge_descriptor e);

} // namespace memwall::topologies
