#include "fabric_routes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>

namespace memwall::topologies {

namespace {
constexpr double kUnreachable = std::numeric_limits<double>::infinity();
} // namespace

bool same_route_cost(double a, double b) {
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

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

RouteFinder::RouteFinder(const FabricGraph& graph) : graph_(graph), edge_cost_(boost::num_edges(graph)) {
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    edge_cost_[edge_index(graph, *e)] = 1.0 / graph[*e].bytes_per_s;
  const size_t vertices = boost::num_vertices(graph);
  out_begin_.reserve(vertices + 1);
  for (FabricVertex u = 0; u < vertices; ++u) {
    out_begin_.push_back(out_target_.size());
    for (auto [e, end] = boost::out_edges(u, graph); e != end; ++e) {
      out_target_.push_back(boost::target(*e, graph));
      out_cost_.push_back(1.0 / graph[*e].bytes_per_s);
    }
  }
  out_begin_.push_back(out_target_.size());
}

void RouteFinder::add_load(const std::vector<RouteHop>& route) {
  for (const auto& hop : route)
    ++load_[{edge_index(graph_, hop.edge), hop.forward}];
}

RouteFinder::Search& RouteFinder::search_to(FabricVertex dst) {
  auto it = cost_cache_.find(dst);
  if (it != cost_cache_.end())
    return it->second;
  if (cost_cache_.size() >= kMaxCachedDestinations) // bound memory: N x V doubles would not fit at 16k GPUs
    cost_cache_.clear();
  Search& s = cost_cache_[dst];
  s.cost.assign(boost::num_vertices(graph_), kUnreachable);
  s.cost[dst] = 0;
  s.queue.push({0.0, dst});
  return s;
}

void RouteFinder::settle(Search& s, const double& radius) {
  std::vector<double>& cost = s.cost;
  while (!s.queue.empty()) {
    const auto [c, u] = s.queue.top();
    if (c > radius && !same_route_cost(c, radius))
      return;
    s.queue.pop();
    if (c > cost[u])
      continue;
    for (size_t k = out_begin_[u]; k < out_begin_[u + 1]; ++k) {
      const FabricVertex w = out_target_[k];
      const double through = c + out_cost_[k];
      if (through < cost[w] && !same_route_cost(through, cost[w])) {
        cost[w] = through;
        s.queue.push({through, w});
      }
    }
  }
}

const std::vector<double>& RouteFinder::costs_to(FabricVertex dst) {
  Search& s = search_to(dst);
  settle(s, kUnreachable);
  return s.cost;
}

const std::vector<double>& RouteFinder::costs_to(FabricVertex dst, FabricVertex src) {
  Search& s = search_to(dst);
  settle(s, s.cost[src]); // the radius is re-read at every pop: it shrinks as src's cost is found
  return s.cost;
}

std::vector<int> RouteFinder::hops_to(FabricVertex dst) const {
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
  return dist;
}

std::vector<RouteFinder::Candidate> RouteFinder::next_hops(FabricVertex u, const std::vector<double>& cost) const {
  std::vector<Candidate> list;
  for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
    const FabricVertex w = boost::target(*e, graph_);
    const size_t k = edge_index(graph_, *e);
    if (same_route_cost(cost[u], cost[w] + edge_cost_[k]) && cost[w] < cost[u])
      list.push_back({RouteHop{*e, u < w}, k, w});
  }
  return list;
}

const RouteFinder::Candidate& RouteFinder::take_least_loaded(const std::vector<Candidate>& next, FabricVertex u,
                                                             FabricVertex dst) {
  const Candidate* best = nullptr;
  long long best_load = std::numeric_limits<long long>::max();
  for (const auto& c : next) {
    const long long load = load_[{c.edge, c.hop.forward}];
    if (load < best_load) {
      best_load = load;
      best = &c;
    }
  }
  if (!best) // cannot happen with positive link costs; never follow a null edge
    throw std::logic_error("no next hop from " + graph_[u].name + " towards " + graph_[dst].name);
  ++load_[{best->edge, best->hop.forward}];
  return *best;
}

std::vector<RouteHop> RouteFinder::route(FabricVertex src, FabricVertex dst) {
  const std::vector<double>& cost = costs_to(dst, src);
  if (cost[src] == kUnreachable)
    throw std::invalid_argument("no path from " + graph_[src].name + " to " + graph_[dst].name);
  std::vector<RouteHop> hops;
  for (FabricVertex u = src; u != dst;) {
    const std::vector<Candidate> next = next_hops(u, cost);
    const Candidate& c = take_least_loaded(next, u, dst);
    hops.push_back(c.hop);
    u = c.next;
  }
  return hops;
}

void RouteFinder::prepare(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests) {
  std::vector<size_t> order;
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto [src, dst] = requests[i];
    const auto table = next_hops_.find(dst);
    if (src != dst && (table == next_hops_.end() || !table->second.count(src)))
      order.push_back(i);
  }
  // By destination: one search each. The costs are the same whatever was searched before (see
  // costs_to), and do not depend on loads.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].second < requests[b].second; });
  for (size_t i : order) {
    const auto [src, dst] = requests[i];
    auto& table = next_hops_[dst];
    if (table.count(src))
      continue;
    const std::vector<double>& cost = costs_to(dst, src);
    if (cost[src] == kUnreachable)
      throw std::invalid_argument("no path from " + graph_[src].name + " to " + graph_[dst].name);
    std::vector<FabricVertex> stack{src};
    while (!stack.empty()) {
      const FabricVertex u = stack.back();
      stack.pop_back();
      if (u == dst || table.count(u))
        continue;
      for (const Candidate& c : table[u] = next_hops(u, cost))
        stack.push_back(c.next);
    }
  }
}

std::vector<std::vector<RouteHop>>
RouteFinder::routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests) {
  prepare(requests);
  // In request order: route()'s walk, the least-loaded candidate (the first of equals).
  std::vector<std::vector<RouteHop>> out(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto [src, dst] = requests[i];
    if (src == dst)
      continue;
    const auto& table = next_hops_.at(dst);
    for (FabricVertex u = src; u != dst;) {
      const Candidate& c = take_least_loaded(table.at(u), u, dst);
      out[i].push_back(c.hop);
      u = c.next;
    }
  }
  return out;
}

} // namespace memwall::topologies
