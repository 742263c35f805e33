// Static routes over a fabric graph: the cheapest paths for bulk transfers (the sum over their links
// of seconds per byte, 1 / bandwidth), spread over equal-cost next hops by choosing, at each branch,
// the link that carries the fewest routes so far (a balanced ECMP). Routes are requested in a fixed
// order, so they are deterministic. Two GPUs of one server thus talk over NVLink, never via NICs.
#pragma once

#include "fabric_graph.hpp"

#include <map>
#include <queue>
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
  // The routes that route() called on each request in turn would give, hop for hop. The searches
  // (one per destination, the costly part) run in destination order, so a batch with more
  // destinations than the cache holds searches each once; the least-loaded choices are then made in
  // request order, as route() makes them.
  std::vector<std::vector<RouteHop>> routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests);
  // Searches ahead for routes() (its first pass), for requests of several batches at once: each
  // destination is then searched once for all of them. The next hops found stay with this finder.
  void prepare(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests);
  // Forgets the loads (routes chosen so far), keeping the searches: a fresh balance, as a new finder.
  void clear_loads() { load_.clear(); }
  // Counts a route chosen elsewhere (an earlier routing that stays) in the link loads that balance
  // the next routes.
  void add_load(const std::vector<RouteHop>& route);
  // Cost (seconds per byte along the cheapest path) from every vertex to `dst` (cached for the
  // last destinations only: the reference is valid until the next call).
  const std::vector<double>& costs_to(FabricVertex dst);
  // The same, final for `src` and every vertex at most as far from `dst` (all a route from `src`
  // looks at); farther ones may still be unsettled. The search from `dst` stops there and resumes
  // for a farther source later, popping vertices in the same order as a full search, so the costs
  // it settles are bit for bit the full search's.
  const std::vector<double>& costs_to(FabricVertex dst, FabricVertex src);
  // Hop counts from every vertex to `dst` (not cached).
  std::vector<int> hops_to(FabricVertex dst) const;

private:
  static constexpr size_t kMaxCachedDestinations = 256;
  const FabricGraph& graph_;
  std::vector<double> edge_cost_; // by edge index
  // Out-edges in boost's order as flat arrays (target, 1 / bandwidth): the searches' inner loop.
  std::vector<size_t> out_begin_;
  std::vector<FabricVertex> out_target_;
  std::vector<double> out_cost_;
  // A Dijkstra search from a destination, resumable.
  struct Search {
    std::vector<double> cost;
    std::priority_queue<std::pair<double, FabricVertex>, std::vector<std::pair<double, FabricVertex>>,
                        std::greater<>>
        queue;
  };
  Search& search_to(FabricVertex dst);
  // Pops while the nearest unsettled vertex is at most `radius` away (up to rounding); `radius` is
  // read again at every pop.
  void settle(Search& s, const double& radius);
  std::unordered_map<FabricVertex, Search> cost_cache_;
  // The equal-cost next hops towards a destination: for each vertex a route may pass, the out-edges
  // onto a cheapest path (route()'s candidates, in boost's out-edge order). They depend on the costs
  // only, not on the source or the loads, so the routes to one destination share them.
  struct Candidate {
    RouteHop hop;
    size_t edge; // index, for the load table
    FabricVertex next;
  };
  std::unordered_map<FabricVertex, std::unordered_map<FabricVertex, std::vector<Candidate>>> next_hops_;
  // u's candidates towards the destination whose costs are `cost` (final up to u's cost).
  std::vector<Candidate> next_hops(FabricVertex u, const std::vector<double>& cost) const;
  // The least-loaded candidate (the first of equals), its link direction's load counted.
  const Candidate& take_least_loaded(const std::vector<Candidate>& next, FabricVertex u, FabricVertex dst);
  std::map<std::pair<size_t, bool>, long long> load_; // (edge index, direction) -> routes using it
};

// Two path costs equal up to rounding (equal-cost paths summed in another order).
bool same_route_cost(double a, double b);

// Edge index (position in boost::edges order), for per-edge tables.
size_t edge_index(const FabricGraph& graph, boost::graph_traits<FabricGraph>::edge_descriptor e);

} // namespace memwall::topologies
