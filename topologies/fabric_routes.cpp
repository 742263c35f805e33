#include "fabric_routes.hpp"

#include <boost/graph/breadth_first_search.hpp>

#include <limits>
#include <stdexcept>

namespace memwall::topologies {

size_t edge_index(const FabricGraph& graph, boost::graph_traits<FabricGraph>::edge_descriptor e) {
  // vecS edge lists: the property's address identifies the edge; map it to its position once.
  static thread_local const FabricGraph* cached_graph = nullptr;
  static thread_local std::unordered_map<const void*, size_t> index;
  if (cached_graph != &graph || index.size() != boost::num_edges(graph)) {
    index.clear();
    size_t i = 0;
    for (auto [it, end] = boost::edges(graph); it != end; ++it)
      index[&graph[*it]] = i++;
    cached_graph = &graph;
  }
  return index.at(&graph[e]);
}

const std::vector<int>& RouteFinder::distances_to(FabricVertex dst) {
  auto it = distance_cache_.find(dst);
  if (it != distance_cache_.end())
    return it->second;
  std::vector<int> dist(boost::num_vertices(graph_), std::numeric_limits<int>::max());
  dist[dst] = 0;
  std::vector<FabricVertex> queue{dst};
  for (size_t head = 0; head < queue.size(); ++head) {
    const FabricVertex u = queue[head];
    for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
      const FabricVertex w = boost::target(*e, graph_);
      if (dist[w] == std::numeric_limits<int>::max()) {
        dist[w] = dist[u] + 1;
        queue.push_back(w);
      }
    }
  }
  return distance_cache_.emplace(dst, std::move(dist)).first->second;
}

std::vector<RouteHop> RouteFinder::route(FabricVertex src, FabricVertex dst) {
  const std::vector<int>& dist = distances_to(dst);
  if (dist[src] == std::numeric_limits<int>::max())
    throw std::invalid_argument("no path from " + graph_[src].name + " to " + graph_[dst].name);
  std::vector<RouteHop> hops;
  FabricVertex u = src;
  while (u != dst) {
    RouteHop best{};
    long long best_load = std::numeric_limits<long long>::max();
    FabricVertex best_next = u;
    for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
      const FabricVertex w = boost::target(*e, graph_);
      if (dist[w] != dist[u] - 1)
        continue;
      const RouteHop hop{*e, u < w};
      const long long load = load_[{edge_index(graph_, *e), hop.forward}];
      if (load < best_load) {
        best_load = load;
        best = hop;
        best_next = w;
      }
    }
    ++load_[{edge_index(graph_, best.edge), best.forward}];
    hops.push_back(best);
    u = best_next;
  }
  return hops;
}

} // namespace memwall::topologies
