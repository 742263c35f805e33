#include "fabric_routes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

void number_edges(const FabricGraph& graph) {
  size_t i = 0;
  for (auto [it, end] = boost::edges(graph); it != end; ++it)
    graph[*it].index = i++;
}

size_t edge_index(const FabricGraph& graph, boost::graph_traits<FabricGraph>::edge_descriptor e) {
  // Graphs from build_fabric_graph come numbered (threads may read them); one built by hand is
  // numbered here the first time one of its edges lacks a number (edges() keeps insertion order, so
  // numbers given before stay).
  if (graph[e].index == FabricLink::kUnnumbered)
    number_edges(graph);
  return graph[e].index;
}

size_t RouteFinder::PairIndex::slot(uint64_t key) const {
  uint64_t h = key * 0x9E3779B97F4A7C15ULL; // Fibonacci hashing: consecutive keys spread
  size_t i = size_t(h >> 20) & (slots_.size() - 1);
  while (slots_[i].first != kEmpty && slots_[i].first != key)
    i = (i + 1) & (slots_.size() - 1);
  return i;
}

const size_t* RouteFinder::PairIndex::find(FabricVertex a, FabricVertex b) const {
  if (slots_.empty())
    return nullptr;
  const auto& entry = slots_[slot(uint64_t(a) * vertices_ + b)];
  return entry.first == kEmpty ? nullptr : &entry.second;
}

void RouteFinder::PairIndex::insert(FabricVertex a, FabricVertex b, size_t value) {
  if (2 * (size_ + 1) > slots_.size()) { // at most half full
    Slots old(std::max<size_t>(64, 2 * slots_.size()), {kEmpty, 0});
    old.swap(slots_);
    for (const auto& entry : old)
      if (entry.first != kEmpty)
        slots_[slot(entry.first)] = entry;
  }
  auto& entry = slots_[slot(uint64_t(a) * vertices_ + b)];
  size_ += entry.first == kEmpty;
  entry = {uint64_t(a) * vertices_ + b, value};
}

RouteFinder::RouteFinder(const FabricGraph& graph)
    : graph_(graph), next_hops_(boost::num_vertices(graph)), toward_(boost::num_vertices(graph)),
      load_(2 * boost::num_edges(graph), 0) {
  const size_t vertices = boost::num_vertices(graph);
  out_begin_.reserve(vertices + 1);
  for (FabricVertex u = 0; u < vertices; ++u) {
    out_begin_.push_back(out_target_.size());
    for (auto [e, end] = boost::out_edges(u, graph); e != end; ++e) {
      out_target_.push_back(boost::target(*e, graph));
      out_cost_.push_back(1.0 / graph[*e].bytes_per_s);
      out_index_.push_back(edge_index(graph, *e));
      out_edge_.push_back(*e);
    }
  }
  out_begin_.push_back(out_target_.size());
  pendant_.assign(vertices, 0);
  pendant_pos_.assign(vertices, 0);
  for (FabricVertex u = 0; u < vertices; ++u)
    pendant_[u] = out_begin_[u + 1] - out_begin_[u] == 1;
  core_begin_.reserve(vertices + 1);
  for (FabricVertex u = 0; u < vertices; ++u) {
    core_begin_.push_back(core_pos_.size());
    for (size_t k = out_begin_[u]; k < out_begin_[u + 1]; ++k) {
      if (pendant_[out_target_[k]])
        pendant_pos_[out_target_[k]] = k;
      else
        core_pos_.push_back(k);
    }
  }
  core_begin_.push_back(core_pos_.size());
  min_link_.assign(vertices, kUnreachable);
  min_core_link_.assign(vertices, kUnreachable);
  for (FabricVertex u = 0; u < vertices; ++u) {
    for (size_t k = out_begin_[u]; k < out_begin_[u + 1]; ++k)
      min_link_[u] = std::min(min_link_[u], out_cost_[k]);
    for (size_t i = core_begin_[u]; i < core_begin_[u + 1]; ++i)
      min_core_link_[u] = std::min(min_core_link_[u], out_cost_[core_pos_[i]]);
  }
}

void RouteFinder::add_load(const std::vector<RouteHop>& route) {
  for (const auto& hop : route)
    ++load_[2 * edge_index(graph_, hop.edge) + hop.forward]; // hops built elsewhere carry no index
}

struct RouteFinder::CostView {
  FabricVertex dst;
  const double* own = nullptr; // the destination's own search, or
  struct Through {
    const double* cost; // a neighbour's search
    double link;                     // the link from it to the destination
    FabricVertex via;
  };
  std::vector<Through> through;
  double operator[](FabricVertex v) const {
    if (own)
      return own[v];
    if (v == dst)
      return 0.0;
    double best = kUnreachable;
    for (const Through& t : through)
      best = std::min(best, t.cost[v] + t.link);
    return best;
  }
};

bool RouteFinder::composed(FabricVertex dst) const {
  const size_t links = out_begin_[dst + 1] - out_begin_[dst];
  if (links == 0 || links > kMaxComposedLinks)
    return false;
  // Through switches (or NICs) that join more than this GPU and one other vertex: a search from them
  // serves several destinations. A GPU's own NIC between it and a leaf would not.
  for (size_t k = out_begin_[dst]; k < out_begin_[dst + 1]; ++k) {
    const FabricVertex via = out_target_[k];
    if (graph_[via].kind == NodeKind::Gpu || out_begin_[via + 1] - out_begin_[via] < 3)
      return false;
  }
  return true;
}

RouteFinder::CostView RouteFinder::view_to(FabricVertex dst, FabricVertex src) {
  CostView view{dst, nullptr, {}};
  if (!composed(dst)) {
    view.own = costs_to(dst, src);
    return view;
  }
  // Each neighbour's search settled up to src: for every vertex at most as far from dst as src, the
  // neighbour it is reached through is then final, and the others can only be dearer.
  const size_t links = out_begin_[dst + 1] - out_begin_[dst];
  if (searches_used_ + links > kMaxCachedDestinations) // all of them cached at once
    forget_searches();
  std::vector<size_t> slots;
  for (size_t k = out_begin_[dst]; k < out_begin_[dst + 1]; ++k) {
    const FabricVertex via = out_target_[k];
    search_to(via);
    slots.push_back(cached_.at(via));
  }
  settle_through(slots, dst, src);
  for (size_t i = 0; i < slots.size(); ++i)
    view.through.push_back({searches_[slots[i]].cost, out_cost_[out_begin_[dst] + i], out_target_[out_begin_[dst] + i]});
  return view;
}

std::vector<RouteFinder::Candidate> RouteFinder::next_hops(FabricVertex u, FabricVertex dst,
                                                          const CostView& cost) const {
  std::vector<Candidate> list;
  auto consider = [&](size_t k) {
    const FabricVertex w = out_target_[k];
    if (same_route_cost(cost[u], cost[w] + out_cost_[k]) && cost[w] < cost[u])
      list.push_back({RouteHop{out_edge_[k], u < w, out_index_[k]}, w});
  };
  // A pendant other than dst is a dead end, never a next hop; the searches leave their costs unset.
  // dst itself, when a pendant next to u, comes in its place in the out-edge order.
  const bool dst_here = pendant_[dst] && out_target_[out_begin_[dst]] == u;
  const size_t dst_pos = dst_here ? pendant_pos_[dst] : 0;
  bool dst_done = !dst_here;
  for (size_t i = core_begin_[u]; i < core_begin_[u + 1]; ++i) {
    const size_t k = core_pos_[i];
    if (!dst_done && dst_pos < k) {
      consider(dst_pos);
      dst_done = true;
    }
    consider(k);
  }
  if (!dst_done)
    consider(dst_pos);
  return list;
}

const RouteFinder::Candidate& RouteFinder::take_least_loaded(CandidateList next,
                                                             FabricVertex u, FabricVertex dst,
                                                             std::vector<long long>& load) const {
  const Candidate* best = nullptr;
  long long best_load = std::numeric_limits<long long>::max();
  for (const auto& c : next) {
    const long long used = load[2 * c.hop.index + c.hop.forward];
    if (used < best_load) {
      best_load = used;
      best = &c;
    }
  }
  if (!best) // cannot happen with positive link costs; never follow a null edge
    throw std::logic_error("no next hop from " + graph_[u].name + " towards " + graph_[dst].name);
  ++load[2 * best->hop.index + best->hop.forward];
  return *best;
}

std::vector<RouteHop> RouteFinder::route(FabricVertex src, FabricVertex dst) {
  const CostView cost{dst, costs_to(dst, src), {}};
  if (cost[src] == kUnreachable)
    throw std::invalid_argument("no path from " + graph_[src].name + " to " + graph_[dst].name);
  std::vector<RouteHop> hops;
  for (FabricVertex u = src; u != dst;) {
    const std::vector<Candidate> next = next_hops(u, dst, cost);
    const Candidate& c = take_least_loaded({next.data(), next.data() + next.size()}, u, dst, load_);
    hops.push_back(c.hop);
    u = c.next;
  }
  return hops;
}

size_t RouteFinder::list_at(FabricVertex u, FabricVertex dst, const CostView& cost, FabricVertex* toward) {
  if (toward)
    *toward = kNoProbe;
  if (!cost.own) {
    const double best = cost[u];
    const CostView::Through* only = nullptr;
    int optimal = 0;
    for (const auto& t : cost.through)
      if (same_route_cost(t.cost[u] + t.link, best)) {
        only = &t;
        ++optimal;
      }
    if (optimal == 1 && u != only->via) {
      if (toward)
        *toward = only->via;
      if (const size_t* list = toward_.find(only->via, u))
        return *list;
      const size_t list = pool_.add(next_hops(u, only->via, CostView{only->via, only->cost, {}}));
      toward_.insert(only->via, u, list);
      return list;
    }
  }
  return pool_.add(next_hops(u, dst, cost));
}

void RouteFinder::prepare(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests) {
  std::vector<size_t> order;
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto [src, dst] = requests[i];
    if (src != dst && !next_hops_.find(dst, src))
      order.push_back(i);
  }
  // By destination: one search each. The costs are the same whatever was searched before (see
  // costs_to), and do not depend on loads.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].second < requests[b].second; });
  for (size_t i : order) {
    const auto [src, dst] = requests[i];
    if (next_hops_.find(dst, src))
      continue;
    const CostView cost = view_to(dst, src);
    if (cost[src] == kUnreachable)
      throw std::invalid_argument("no path from " + graph_[src].name + " to " + graph_[dst].name);
    // Each vertex with the via it is walked towards (kNoProbe: dst itself). A vertex whose cheapest
    // paths to a composed dst all pass one of its neighbours `via` delegates: so do all the vertices
    // after it (a vertex after it with another cheapest via would give it one too), and their lists
    // are those towards `via`, kept once for every destination behind it (toward_). Only the
    // delegating vertex is indexed per destination: a fat-tree's spines are not, once per GPU.
    std::vector<std::pair<FabricVertex, FabricVertex>> stack{{src, kNoProbe}};
    while (!stack.empty()) {
      auto [u, via] = stack.back();
      stack.pop_back();
      if (u == via)
        via = kNoProbe; // at the via: its own link on to dst
      if (u == dst || (via == kNoProbe ? next_hops_.find(dst, u) : toward_.find(via, u)))
        continue;
      FabricVertex toward = kNoProbe;
      const size_t list = list_at(u, dst, cost, &toward);
      if (via != kNoProbe && toward != via)
        throw std::logic_error("route to " + graph_[dst].name + ": " + graph_[u].name + " left its via");
      if (via == kNoProbe)
        next_hops_.insert(dst, u, toward == kNoProbe ? list : kDelegated | toward);
      if (via == kNoProbe && toward != kNoProbe) // the walk towards `via` may already be known, the via's
        stack.emplace_back(toward, kNoProbe);    // own next hops to this dst not yet
      for (const Candidate& c : pool_[list])
        stack.emplace_back(c.next, toward);
    }
  }
}

template <class Hop>
void RouteFinder::walk(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests,
                       std::vector<long long>& load, Hop&& hop) const {
  // In request order: route()'s walk, the least-loaded candidate (the first of equals).
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto [src, dst] = requests[i];
    FabricVertex via = kNoProbe; // after a delegating vertex (prepare), the via walked towards
    for (FabricVertex u = src; u != dst;) {
      const size_t* list = via == kNoProbe ? next_hops_.find(dst, u) : toward_.find(via, u);
      if (list && via == kNoProbe && (*list & kDelegated)) {
        via = *list & ~kDelegated;
        list = toward_.find(via, u);
      }
      if (!list)
        throw std::logic_error("route from " + graph_[src].name + " to " + graph_[dst].name +
                               " walked unprepared");
      const Candidate& c = take_least_loaded(pool_[*list], u, dst, load);
      hop(i, c);
      u = c.next;
      if (u == via)
        via = kNoProbe;
    }
  }
}

std::vector<std::vector<RouteHop>>
RouteFinder::routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests) {
  prepare(requests);
  std::vector<std::vector<RouteHop>> out(requests.size());
  walk(requests, load_, [&](size_t i, const Candidate& c) { out[i].push_back(c.hop); });
  return out;
}

FlatRoutes RouteFinder::flat_routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests) {
  prepare(requests);
  return flat_routes(requests, load_);
}

FlatRoutes RouteFinder::flat_routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests,
                                    std::vector<long long>& load) const {
  FlatRoutes out;
  out.begin.reserve(requests.size() + 1);
  out.slots.reserve(4 * requests.size());
  size_t done = 0; // requests whose routes are complete
  walk(requests, load, [&](size_t i, const Candidate& c) {
    for (; done < i; ++done)
      out.begin.push_back(out.slots.size());
    out.slots.push_back(uint32_t(2 * c.hop.index + c.hop.forward));
  });
  for (; done < requests.size(); ++done)
    out.begin.push_back(out.slots.size());
  return out;
}

} // namespace memwall::topologies
