// RouteFinder's searches: a resumable Dijkstra per destination (fabric_routes.hpp says how it
// stops early and what waits), and the settling of a composed destination's neighbours' searches.
#include "fabric_routes.hpp"

#include <algorithm>
#include <limits>

namespace memwall::topologies {

namespace {
constexpr double kUnreachable = std::numeric_limits<double>::infinity();
} // namespace

RouteFinder::Search& RouteFinder::search_to(FabricVertex dst) {
  if (auto it = cached_.find(dst); it != cached_.end())
    return searches_[it->second];
  if (searches_used_ == kMaxCachedDestinations) // bound memory: N x V doubles would not fit at 16k GPUs
    forget_searches();
  if (searches_used_ == searches_.size()) {
    const size_t vertices = boost::num_vertices(graph_);
    if (searches_.size() % kSlabSearches == 0)
      cost_slabs_.emplace_back(kSlabSearches * vertices, kUnreachable);
    searches_.push_back({cost_slabs_.back().data() + searches_.size() % kSlabSearches * vertices, {}, {}, {}});
  }
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
  b.least_link = std::min(b.least_link, onward_link(v, origin));
}

void RouteFinder::wait(Search& s, double reach, double cost, std::vector<FabricVertex>&& vertices) {
  s.deferred[reach].push_back({cost, std::move(vertices)});
}

void RouteFinder::expand(Search& s, FabricVertex origin, FabricVertex u) {
  double* cost = s.cost;
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
      const double reach = c + onward_link(u, origin);
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

const double* RouteFinder::settle_for(Search& s, FabricVertex dst, FabricVertex src) {
  if (!pendant_[src] || src == dst) {
    settle(s, dst, src);
    return s.cost;
  }
  // A pendant source: its neighbour's cost, plus its link (what relaxing it would have given).
  settle(s, dst, out_target_[out_begin_[src]]);
  fill_pendant(s, src);
  return s.cost;
}

std::vector<double> RouteFinder::costs_to(FabricVertex dst) {
  Search& s = search_to(dst);
  settle(s, dst, kNoProbe);
  const size_t vertices = boost::num_vertices(graph_);
  for (FabricVertex v = 0; v < vertices; ++v)
    if (pendant_[v])
      fill_pendant(s, v);
  return std::vector<double>(s.cost, s.cost + vertices);
}

const double* RouteFinder::costs_to(FabricVertex dst, FabricVertex src) {
  return settle_for(search_to(dst), dst, src);
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

} // namespace memwall::topologies
