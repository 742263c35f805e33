#include "choice.hpp"

#include "channels.hpp"

#include "estimate.hpp"
#include "topologies/fabric_routes.hpp"

#include <algorithm>
#include <future>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace memwall::collectives {

namespace {

// Dijkstra from one GPU that stops at the nearest unvisited GPU (cheapest path in seconds per byte,
// lowest rank among equal costs). It settles only the neighbourhood it needs, so a ring over N GPUs
// costs N small searches, not N sweeps of the whole fabric. Relaxation and tie rules are those of
// RouteFinder::costs_to, so the walk is the one a full sweep per step would give. Three shortcuts keep
// a step's cost independent of N:
// - the search ends at the first unvisited GPU it settles (equal costs are settled unvisited GPUs
//   first, by rank; edge costs are positive, so nothing settled later is cheaper);
// - unvisited GPUs are never expanded, so a vertex offers only its first unvisited GPU neighbour in
//   (link cost, rank) order, the only one of them that can win: its GPU neighbours are kept sorted
//   with a cursor past the visited ones;
// - nothing is pushed that could only be settled after the best unvisited GPU offered so far: a
//   vertex whose cheapest onward link would reach beyond it. Once a fat-tree leaf's GPUs are all
//   visited, the next step's search reaches every leaf, and without this bound each leaf pushed its
//   visited GPUs: N^2/32 pushes over the walk (15 s of `topo` at 131,072 GPUs).
class NearestGpu {
public:
  explicit NearestGpu(const topologies::FabricGraph& graph)
      : graph_(graph), gpus_(topologies::gpu_vertices(graph)), rank_of_(boost::num_vertices(graph), -1),
        cost_(boost::num_vertices(graph), kUnreached), min_link_(boost::num_vertices(graph), kUnreached),
        gpu_links_(boost::num_vertices(graph)), cursor_(boost::num_vertices(graph), 0) {
    for (size_t r = 0; r < gpus_.size(); ++r)
      rank_of_[gpus_[r]] = static_cast<long long>(r);
    auto link_cost = [&](auto e) { return 1.0 / graph[e].bytes_per_s; };
    for (auto [v, end] = boost::vertices(graph); v != end; ++v)
      for (auto [e, e_end] = boost::out_edges(*v, graph); e != e_end; ++e)
        min_link_[*v] = std::min(min_link_[*v], link_cost(*e));
    // Per vertex, in boost's out-edge order: links to vertices other than GPUs (flat arrays: the
    // inner loop, without an edge-index lookup), links to GPUs that are not leaves (visited ones are
    // paths onward), and all GPU neighbours by (link cost, rank) for the cursor.
    for (auto [v, end] = boost::vertices(graph); v != end; ++v) {
      out_begin_.push_back(out_target_.size());
      inner_begin_.push_back(inner_target_.size());
      double inner_reach = kUnreached;
      for (auto [e, e_end] = boost::out_edges(*v, graph); e != e_end; ++e) {
        const topologies::FabricVertex w = boost::target(*e, graph);
        if (rank_of_[w] < 0) {
          out_target_.push_back(w);
          out_cost_.push_back(link_cost(*e));
          continue;
        }
        gpu_links_[*v].push_back({link_cost(*e), rank_of_[w]});
        if (boost::out_degree(w, graph) > 1) {
          inner_target_.push_back(w);
          inner_cost_.push_back(link_cost(*e));
          inner_reach = std::min(inner_reach, link_cost(*e) + min_link_[w]);
        }
      }
      inner_reach_.push_back(inner_reach);
    }
    out_begin_.push_back(out_target_.size());
    inner_begin_.push_back(inner_target_.size());
    for (auto& list : gpu_links_)
      std::sort(list.begin(), list.end());
  }

  long long from(long long rank, const std::vector<bool>& visited) {
    for (topologies::FabricVertex v : touched_)
      cost_[v] = kUnreached;
    touched_.clear();
    best_ = kUnreached;
    Queue queue;
    const topologies::FabricVertex start = gpus_[size_t(rank)];
    relax(start, 0.0, visited, queue);
    while (!queue.empty()) {
      const auto [c, key, u] = queue.top();
      queue.pop();
      if (c > cost_[u])
        continue;
      // Among equal costs, unvisited GPUs come first and by rank: the first one is the answer.
      const long long r = rank_of_[u];
      if (r >= 0 && !visited[size_t(r)])
        return r;
      for (size_t k = out_begin_[u]; k < out_begin_[u + 1]; ++k)
        relax(out_target_[k], c + out_cost_[k], visited, queue);
      if (!(c + inner_reach_[u] > best_)) // visited GPUs on a path onward, unless it would reach too far
        for (size_t k = inner_begin_[u]; k < inner_begin_[u + 1]; ++k)
          if (visited[size_t(rank_of_[inner_target_[k]])])
            relax(inner_target_[k], c + inner_cost_[k], visited, queue);
      auto& list = gpu_links_[u];
      size_t& next = cursor_[u];
      while (next < list.size() && visited[size_t(list[next].second)])
        ++next;
      if (next < list.size())
        relax(gpus_[size_t(list[next].second)], c + list[next].first, visited, queue);
    }
    return -1;
  }

private:
  // (cost, order key, vertex). The key orders equal costs: an unvisited GPU by its rank, before every
  // other vertex. So the search stops at the first unvisited GPU it settles, without settling the
  // rest of an equal-cost bucket.
  using Item = std::tuple<double, unsigned long long, topologies::FabricVertex>;
  using Queue = std::priority_queue<Item, std::vector<Item>, std::greater<>>;
  static constexpr double kUnreached = std::numeric_limits<double>::infinity();
  void relax(topologies::FabricVertex v, double through, const std::vector<bool>& visited, Queue& queue) {
    const long long r = rank_of_[v];
    const bool candidate = r >= 0 && !visited[size_t(r)];
    // A vertex that is not a candidate matters only through what it reaches: beyond the best
    // candidate offered, it would be settled after the search has ended.
    if (!candidate && through + min_link_[v] > best_)
      return;
    if (through < cost_[v] && !topologies::same_route_cost(through, cost_[v])) {
      if (cost_[v] == kUnreached)
        touched_.push_back(v);
      cost_[v] = through;
      if (candidate)
        best_ = std::min(best_, through);
      const auto key = candidate ? static_cast<unsigned long long>(r)
                                 : static_cast<unsigned long long>(gpus_.size() + v);
      queue.push({through, key, v});
    }
  }
  const topologies::FabricGraph& graph_;
  std::vector<topologies::FabricVertex> gpus_;
  std::vector<long long> rank_of_;
  std::vector<double> cost_;
  std::vector<double> min_link_; // per vertex: its cheapest link
  std::vector<size_t> out_begin_;
  std::vector<topologies::FabricVertex> out_target_;
  std::vector<double> out_cost_;
  std::vector<size_t> inner_begin_;
  std::vector<topologies::FabricVertex> inner_target_;
  std::vector<double> inner_cost_;
  std::vector<double> inner_reach_; // per vertex: least cost onward through one of its inner GPUs
  std::vector<std::vector<std::pair<double, long long>>> gpu_links_; // per vertex: (link cost, rank)
  std::vector<size_t> cursor_;                                        // per vertex: first maybe unvisited
  std::vector<topologies::FabricVertex> touched_;
  double best_ = kUnreached; // least cost of an unvisited GPU offered in this search
};

} // namespace

std::vector<long long> topology_ring_order(const topologies::FabricGraph& graph) {
  const long long n = static_cast<long long>(topologies::gpu_vertices(graph).size());
  NearestGpu nearest(graph);
  std::vector<long long> order{0};
  std::vector<bool> visited(size_t(n), false);
  visited[0] = true;
  for (long long step = 1; step < n; ++step) {
    const long long next = nearest.from(order.back(), visited);
    if (next < 0)
      throw std::invalid_argument("the fabric's GPUs are not all connected");
    visited[size_t(next)] = true;
    order.push_back(next);
  }
  return order;
}

namespace {

Schedule named_schedule(const std::string& name, const std::string& ring_order,
                        const topologies::FabricGraph& graph, double bytes, long long channels,
                        double nvls_efficiency) {
  const long long n = static_cast<long long>(topologies::gpu_vertices(graph).size());
  if (name == "ring") {
    std::vector<long long> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0LL);
    if (ring_order == "topology")
      order = topology_ring_order(graph);
    return ring_schedule(order, bytes, channels > 1 ? places_of_ranks(graph) : std::vector<GpuPlace>{}, channels);
  }
  if (name == "hierarchical")
    return hierarchical_schedule(n, topologies::gpus_per_node(graph), bytes);
  if (name == "tree") // NCCL's: chains inside servers, a double binary tree across them
    return nccl_tree_schedule(places_of_ranks(graph), bytes, channels);
  if (name == "halving-doubling")
    return halving_doubling_schedule(n, bytes);
  if (name == "nvls")
    return nvls_schedule(places_of_ranks(graph), bytes, nvls_efficiency);
  throw std::invalid_argument("unknown collective '" + name + "' (known: " + kCollectiveNames + ")");
}

} // namespace

bool nvls_applies(const topologies::FabricGraph& graph, double nvls_efficiency) {
  if (!(nvls_efficiency > 0))
    return false;
  const std::vector<GpuPlace> places = places_of_ranks(graph);
  return places.size() >= 2 && std::all_of(places.begin(), places.end(), [&](const GpuPlace& p) {
           return p.server >= 0 && p.server == places.front().server;
         });
}

CollectiveChoice choose_collective(const std::string& name, const std::string& ring_order,
                                   const topologies::FabricGraph& graph, double bytes, long long channels,
                                   double nvls_efficiency) {
  if (ring_order != "topology" && ring_order != "rank")
    throw std::invalid_argument("unknown ring order '" + ring_order + "' (topology or rank)");
  CollectiveChoice choice;
  if (name != "auto") {
    choice.schedule = named_schedule(name, ring_order, graph, bytes, channels, nvls_efficiency);
    return choice;
  }
  const long long n = static_cast<long long>(topologies::gpu_vertices(graph).size());
  // The topology ring order (a search from every GPU, 0.15 s at 16,384 GPUs) needs nothing but the
  // graph: it runs on a thread of its own while the other candidates are built. Below 4,096 GPUs
  // threads do not pay: starting one, with its fresh memory arena, costs about 10 ms on 2 cores (1,024
  // GPUs: 0.30 s with threads, 0.29 s without), more than the ring order and the walks take there.
  const std::launch policy = n >= 4096 ? std::launch::async : std::launch::deferred;
  std::future<Schedule> ring =
      std::async(policy, [&] { return named_schedule("ring", ring_order, graph, bytes, channels, 0); });
  std::vector<std::pair<std::string, Schedule>> candidates{{"ring", {}}};
  for (const char* candidate : {"hierarchical", "tree", "halving-doubling", "nvls"})
    if ((std::string(candidate) != "halving-doubling" || is_power_of_two(n)) &&
        (std::string(candidate) != "nvls" || nvls_applies(graph, nvls_efficiency)))
      candidates.emplace_back(candidate,
                              named_schedule(candidate, ring_order, graph, bytes, channels, nvls_efficiency));
  // One finder for all: each destination searched once (the costly part); each estimate balances
  // loads of its own, as on a finder of its own (the searches do not depend on what came before).
  choice.routes = std::make_shared<topologies::RouteFinder>(graph);
  topologies::RouteFinder& routes = *choice.routes;
  std::vector<std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>>> requests(
      candidates.size());
  std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>> all;
  for (size_t k = 1; k < candidates.size(); ++k) {
    requests[k] = route_requests(candidates[k].second, graph);
    all.insert(all.end(), requests[k].begin(), requests[k].end());
  }
  // The other candidates' routes in one batch (a destination searched for one batch is forgotten by
  // the next), while the ring order is still being found: at 131,072 GPUs each takes about 12 s.
  // The ring's own requests then go to its near neighbours, cheap to search again.
  routes.prepare(all);
  all = {};
  candidates[0].second = ring.get();
  requests[0] = route_requests(candidates[0].second, graph);
  routes.prepare(requests[0]);
  // The estimates only read the finder: the one with the most flows on a thread, the others here.
  std::vector<double> seconds(candidates.size());
  std::vector<topologies::FlatRoutes> found(candidates.size());
  auto estimate = [&](size_t k) {
    std::vector<long long> load(routes.load_slots(), 0);
    found[k] = routes.flat_routes(requests[k], load);
    seconds[k] = estimate_seconds(candidates[k].second, graph, found[k]);
  };
  size_t largest = 0;
  for (size_t k = 1; k < candidates.size(); ++k)
    if (requests[k].size() > requests[largest].size())
      largest = k;
  std::future<void> largest_done = std::async(policy, estimate, largest);
  for (size_t k = 0; k < candidates.size(); ++k)
    if (k != largest)
      estimate(k);
  largest_done.get();
  double best = std::numeric_limits<double>::max();
  for (size_t k = 0; k < candidates.size(); ++k) {
    choice.estimates_s[candidates[k].first] = seconds[k];
    if (seconds[k] < best) {
      best = seconds[k];
      choice.schedule = std::move(candidates[k].second);
      choice.flow_routes = std::move(found[k]);
    }
  }
  return choice;
}

} // namespace memwall::collectives
