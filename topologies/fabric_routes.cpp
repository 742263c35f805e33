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
    std::vector<std::pair<uint64_t, size_t>> old(std::max<size_t>(64, 2 * slots_.size()), {kEmpty, 0});
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

RouteFinder::Search& RouteFinder::search_to(FabricVertex dst) {
  if (auto it = cached_.find(dst); it != cached_.end())
    return searches_[it->second];
  if (searches_used_ == kMaxCachedDestinations) // bound memory: N x V doubles would not fit at 16k GPUs
    forget_searches();
  if (searches_used_ == searches_.size())
    searches_.push_back({std::vector<double>(boost::num_vertices(graph_), kUnreachable), {}, {}, {}});
  Search& s = searches_[searches_used_];
  cached_[dst] = searches_used_++;
  for (FabricVertex v : s.touched)
    s.cost[v] = kUnreachable;
  s.touched.clear();
  s.queue.clear();
  s.deferred.clear();
  set_cost(s, dst, 0.0);
  push(s, dst, 0.0, dst);
  return s;
}

void RouteFinder::sort_vertices(std::vector<FabricVertex>& bucket) {
  // A bucket holds each vertex once. A large one (a fat-tree's GPUs at one distance) is sorted
  // through a bitmap of all vertices: marking and one pass over V / 64 words, not b log b.
  if (bucket.size() < 64) {
    std::sort(bucket.begin(), bucket.end());
    return;
  }
  bitmap_.resize((out_begin_.size() + 63) / 64);
  for (FabricVertex v : bucket)
    bitmap_[v / 64] |= uint64_t(1) << (v % 64);
  bucket.clear();
  for (size_t word = 0; word < bitmap_.size(); ++word)
    for (uint64_t bits = bitmap_[word]; bits; bits &= bits - 1)
      bucket.push_back(word * 64 + size_t(__builtin_ctzll(bits)));
  std::fill(bitmap_.begin(), bitmap_.end(), 0);
}

double RouteFinder::frontier(const Search& s) {
  const double queued = s.queue.empty() ? kUnreachable : s.queue.begin()->first;
  const double waiting = s.deferred.empty() ? kUnreachable : s.deferred.begin()->first;
  return std::min(queued, waiting);
}

void RouteFinder::push(Search& s, FabricVertex v, double cost, FabricVertex origin) {
  Bucket& b = s.queue[cost];
  b.vertices.push_back(v);
  b.least_link = std::min(b.least_link, v == origin ? min_link_[v] : min_core_link_[v]);
}

void RouteFinder::wait(Search& s, double reach, double cost, std::vector<FabricVertex>&& vertices) {
  s.deferred[reach].push_back({cost, std::move(vertices)});
}

void RouteFinder::expand(Search& s, FabricVertex origin, FabricVertex u) {
  std::vector<double>& cost = s.cost;
  const double c = cost[u];
  auto relax = [&](size_t k) {
    const FabricVertex w = out_target_[k];
    const double through = c + out_cost_[k];
    if (through < cost[w] && !same_route_cost(through, cost[w])) {
      set_cost(s, w, through);
      push(s, w, through, origin);
    }
  };
  if (u == origin) { // the search's start reaches its neighbours, pendant or not
    for (size_t k = out_begin_[u]; k < out_begin_[u + 1]; ++k)
      relax(k);
  } else {
    for (size_t i = core_begin_[u]; i < core_begin_[u + 1]; ++i)
      relax(core_pos_[i]);
  }
}

void RouteFinder::pop_next(Search& s, FabricVertex origin, double radius) {
  auto due = [&](double reach) { return reach < radius && !same_route_cost(reach, radius); };
  // Expands the vertices of one cost whose cheapest link reaches below the radius, in vertex order;
  // the others wait, each keyed by its own reach. Entries whose cost fell since are skipped.
  auto settle_cost = [&](double c, std::vector<FabricVertex>& vertices) {
    sort_vertices(vertices);
    std::map<double, std::vector<FabricVertex>> later;
    for (const FabricVertex u : vertices) {
      if (c > s.cost[u])
        continue; // found cheaper since
      const double reach = c + (u == origin ? min_link_[u] : min_core_link_[u]);
      if (due(reach))
        expand(s, origin, u);
      else if (reach != kUnreachable)
        later[reach].push_back(u);
    }
    for (auto& [reach, list] : later)
      wait(s, reach, c, std::move(list));
  };
  // Waiting vertices first on a tie: a plain search would have expanded them before this bucket.
  if (!s.deferred.empty() && (s.queue.empty() || s.deferred.begin()->first <= s.queue.begin()->first)) {
    std::vector<Waiting> groups = std::move(s.deferred.begin()->second);
    s.deferred.erase(s.deferred.begin());
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Waiting& a, const Waiting& b) { return a.cost < b.cost; });
    for (Waiting& g : groups)
      settle_cost(g.cost, g.vertices);
    return;
  }
  auto first = s.queue.begin();
  const double c = first->first;
  Bucket bucket = std::move(first->second);
  s.queue.erase(first);
  if (bucket.least_link == kUnreachable)
    return; // none of its vertices has a link onward
  if (!due(c + bucket.least_link)) {
    // None of them can reach below the radius: the bucket waits whole, untouched (a fat-tree's
    // leaves, 4,096 at 131,072 GPUs, once in every search that gets past the spines).
    wait(s, c + bucket.least_link, c, std::move(bucket.vertices));
    return;
  }
  settle_cost(c, bucket.vertices);
}

void RouteFinder::probe_fill(Search& s, FabricVertex probe) {
  // The probe's cost through neighbours whose costs are final (at most the frontier): what relaxing
  // their links would give, without expanding them, nor the rest of their bucket.
  const double f = frontier(s);
  if (s.cost[probe] <= f)
    return; // final already (a star's switch, next to every source, need not scan its N links)
  for (size_t k = out_begin_[probe]; k < out_begin_[probe + 1]; ++k) {
    const FabricVertex n = out_target_[k];
    if (s.cost[n] > f)
      continue; // not final yet (or unreached)
    const double through = s.cost[n] + out_cost_[k];
    if (through < s.cost[probe] && !same_route_cost(through, s.cost[probe])) {
      set_cost(s, probe, through);
      push(s, probe, through, kNoProbe);
    }
  }
}

void RouteFinder::settle(Search& s, FabricVertex origin, FabricVertex probe) {
  for (;;) {
    if (probe != kNoProbe)
      probe_fill(s, probe);
    const double radius = probe == kNoProbe ? kUnreachable : s.cost[probe];
    const double next = frontier(s);
    if (next == kUnreachable || next >= radius || same_route_cost(next, radius))
      return; // everything nearer than the probe is final, and so is the probe
    pop_next(s, origin, radius);
  }
}

void RouteFinder::fill_pendant(Search& s, FabricVertex v) {
  const FabricVertex via = out_target_[out_begin_[v]];
  if (s.cost[v] == kUnreachable && s.cost[via] != kUnreachable)
    set_cost(s, v, s.cost[via] + out_cost_[pendant_pos_[v]]);
}

const std::vector<double>& RouteFinder::settle_for(Search& s, FabricVertex dst, FabricVertex src) {
  if (!pendant_[src] || src == dst) {
    settle(s, dst, src);
    return s.cost;
  }
  // A pendant source: its neighbour's cost, plus its link (what relaxing it would have given).
  settle(s, dst, out_target_[out_begin_[src]]);
  fill_pendant(s, src);
  return s.cost;
}

const std::vector<double>& RouteFinder::costs_to(FabricVertex dst) {
  Search& s = search_to(dst);
  settle(s, dst, kNoProbe);
  for (FabricVertex v = 0; v < s.cost.size(); ++v)
    if (pendant_[v])
      fill_pendant(s, v);
  return s.cost;
}

const std::vector<double>& RouteFinder::costs_to(FabricVertex dst, FabricVertex src) {
  return settle_for(search_to(dst), dst, src);
}

struct RouteFinder::CostView {
  FabricVertex dst;
  const std::vector<double>* own = nullptr; // the destination's own search, or
  struct Through {
    const std::vector<double>* cost; // a neighbour's search
    double link;                     // the link from it to the destination
    FabricVertex via;
  };
  std::vector<Through> through;
  double operator[](FabricVertex v) const {
    if (own)
      return (*own)[v];
    if (v == dst)
      return 0.0;
    double best = kUnreachable;
    for (const Through& t : through)
      best = std::min(best, (*t.cost)[v] + t.link);
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

void RouteFinder::settle_through(const std::vector<size_t>& slots, FabricVertex dst, FabricVertex src) {
  // As one search from dst would: the next bucket is the one, over all neighbours' searches, whose
  // cost plus the neighbour's link is least; it stops once that reaches the best cost of src found
  // so far. A neighbour whose paths to src are dearer is then settled only as far as it could still
  // matter: on a fat-tree a GPU's NVSwitch, two NVLink hops dearer towards a far GPU than its NIC,
  // stops before the fabric's GPUs instead of settling all of them. Every vertex nearer to dst than
  // src is final in each neighbour's search whose path could be among its cheapest, so the view's
  // costs, and the routes, are those of settling every neighbour's search in full.
  const FabricVertex probe = pendant_[src] && src != dst ? out_target_[out_begin_[src]] : src;
  const size_t first_link = out_begin_[dst];
  for (;;) {
    double best = kUnreachable; // src's cost through the neighbours, as settled so far
    size_t next = slots.size();
    double next_cost = kUnreachable;
    for (size_t i = 0; i < slots.size(); ++i) {
      Search& s = searches_[slots[i]];
      probe_fill(s, probe);
      const double link = out_cost_[first_link + i];
      best = std::min(best, s.cost[probe] + link);
      if (frontier(s) + link < next_cost) {
        next_cost = frontier(s) + link;
        next = i;
      }
    }
    if (next == slots.size() || next_cost >= best || same_route_cost(next_cost, best))
      break;
    pop_next(searches_[slots[next]], out_target_[first_link + next], best - out_cost_[first_link + next]);
  }
  if (probe != src)
    for (size_t slot : slots)
      fill_pendant(searches_[slot], src);
}

RouteFinder::CostView RouteFinder::view_to(FabricVertex dst, FabricVertex src) {
  CostView view{dst, nullptr, {}};
  if (!composed(dst)) {
    view.own = &costs_to(dst, src);
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
  for (size_t i = 0; i < slots.size(); ++i) // after search_to: its slots may move while they grow
    view.through.push_back({&searches_[slots[i]].cost, out_cost_[out_begin_[dst] + i], out_target_[out_begin_[dst] + i]});
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

const RouteFinder::Candidate& RouteFinder::take_least_loaded(const std::vector<Candidate>& next,
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
  const CostView cost{dst, &costs_to(dst, src), {}};
  if (cost[src] == kUnreachable)
    throw std::invalid_argument("no path from " + graph_[src].name + " to " + graph_[dst].name);
  std::vector<RouteHop> hops;
  for (FabricVertex u = src; u != dst;) {
    const std::vector<Candidate> next = next_hops(u, dst, cost);
    const Candidate& c = take_least_loaded(next, u, dst, load_);
    hops.push_back(c.hop);
    u = c.next;
  }
  return hops;
}

size_t RouteFinder::list_at(FabricVertex u, FabricVertex dst, const CostView& cost) {
  if (!cost.own) {
    const double best = cost[u];
    const CostView::Through* only = nullptr;
    int optimal = 0;
    for (const auto& t : cost.through)
      if (same_route_cost((*t.cost)[u] + t.link, best)) {
        only = &t;
        ++optimal;
      }
    if (optimal == 1 && u != only->via) {
      if (const size_t* list = toward_.find(only->via, u))
        return *list;
      pool_.push_back(next_hops(u, only->via, CostView{only->via, only->cost, {}}));
      toward_.insert(only->via, u, pool_.size() - 1);
      return pool_.size() - 1;
    }
  }
  pool_.push_back(next_hops(u, dst, cost));
  return pool_.size() - 1;
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
    std::vector<FabricVertex> stack{src};
    while (!stack.empty()) {
      const FabricVertex u = stack.back();
      stack.pop_back();
      if (u == dst || next_hops_.find(dst, u))
        continue;
      const size_t list = list_at(u, dst, cost);
      next_hops_.insert(dst, u, list);
      for (const Candidate& c : pool_[list])
        stack.push_back(c.next);
    }
  }
}

template <class Hop>
void RouteFinder::walk(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests,
                       std::vector<long long>& load, Hop&& hop) const {
  // In request order: route()'s walk, the least-loaded candidate (the first of equals).
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto [src, dst] = requests[i];
    for (FabricVertex u = src; u != dst;) {
      const size_t* list = next_hops_.find(dst, u);
      if (!list)
        throw std::logic_error("route from " + graph_[src].name + " to " + graph_[dst].name +
                               " walked unprepared");
      const Candidate& c = take_least_loaded(pool_[*list], u, dst, load);
      hop(i, c);
      u = c.next;
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
