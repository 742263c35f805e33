#include "sim/engine/platform_builder.hpp"

#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <unordered_set>
#include <stdexcept>
#include <string>

#include "sim/engine/pair_zone.hpp"
#include "topologies/fabric_routes.hpp"

namespace memwall::sim {

namespace sg4 = simgrid::s4u;
using topologies::FabricGraph;
using topologies::NodeKind;

namespace {

// Both directions of a split-duplex link carry the fabric link's energy and class.
void note_link(Platform& platform, const topologies::FabricLink& spec) {
  for (const char* dir : {"_UP", "_DOWN"}) {
    platform.links->pj_per_bit[spec.name + dir] = spec.pj_per_bit;
    platform.links->link_class[spec.name + dir] = spec.link_class;
  }
}

// A star: one switch, every edge joins a GPU to it.
bool is_star(const FabricGraph& graph) {
  long long switches = 0;
  for (auto [v, end] = boost::vertices(graph); v != end; ++v)
    switches += graph[*v].kind != NodeKind::Gpu;
  if (switches != 1)
    return false;
  for (auto [v, end] = boost::vertices(graph); v != end; ++v)
    if (graph[*v].kind == NodeKind::Gpu && boost::out_degree(*v, graph) != 1)
      return false;
  return true;
}

// A local repair: routes that a link failure cuts get new paths around it, balanced against the
// routes that stay, and move both their GPUs to new hosts (named "@epoch"), from which the routes that
// were not cut stay as they were. The other GPUs keep their hosts, so a failure adds a few hosts, not
// a copy of the fabric.
Platform build_routed_platform(const std::vector<const FabricGraph*>& graphs,
                               const std::vector<double>& start_s, const std::vector<double>& gpu_flops_per_s,
                               const std::vector<std::pair<long long, long long>>& pairs,
                               const RouteNeeds& needs, std::shared_ptr<topologies::RouteFinder> finder,
                               const topologies::FlatRoutes* pair_routes) {
  Platform platform;
  platform.epoch_start_s = start_s;
  // Distinct pairs in the collective's order: balanced routes depend on the order they are asked for.
  std::unordered_set<std::pair<long long, long long>, RankPairHash> seen;
  std::vector<std::pair<size_t, size_t>> unique;
  for (const auto& pair : pairs)
    if (pair.first != pair.second && seen.insert(pair).second)
      unique.emplace_back(size_t(pair.first), size_t(pair.second));
  const auto gpu_nodes = topologies::gpu_vertices(*graphs.front());
  const size_t n = gpu_nodes.size();
  // The first epoch's routes, before any SimGrid object: SimGrid gets only those it will carry.
  // A route depends only on the requests before it: if the distinct pairs are the first ones asked
  // for, a batch of all pairs has already routed them, and its first unique.size() routes are theirs.
  const bool known = pair_routes && pair_routes->size() == pairs.size() && distinct_pairs_first(pairs);
  topologies::FlatRoutes found;
  if (!known) {
    std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>> requests;
    for (const auto& [src, dst] : unique)
      requests.emplace_back(gpu_nodes[src], gpu_nodes[dst]);
    if (finder) {
      finder->clear_loads();
      found = finder->flat_routes(requests);
    } else {
      found = topologies::RouteFinder(*graphs.front()).flat_routes(requests);
    }
  }
  const topologies::FlatRoutes& first_routes = known ? *pair_routes : found; // route i: unique[i]'s
  // The finder's searches are most of `auto`'s memory: gone before SimGrid's objects, which then reuse
  // that memory rather than touch new pages.
  finder.reset();
  std::vector<bool> carried(unique.size(), true); // by SimGrid
  if (needs && graphs.size() == 1) {
    collectives::RouteLinks ids;
    for (size_t i = 0; i < unique.size(); ++i) {
      std::vector<uint64_t>& route = ids[{static_cast<long long>(unique[i].first),
                                          static_cast<long long>(unique[i].second)}];
      route.assign(first_routes.slots.begin() + static_cast<std::ptrdiff_t>(first_routes.begin[i]),
                   first_routes.slots.begin() + static_cast<std::ptrdiff_t>(first_routes.begin[i + 1]));
    }
    std::unordered_set<std::pair<long long, long long>, RankPairHash> wanted;
    for (const auto& pair : needs(ids))
      wanted.insert(pair);
    for (size_t i = 0; i < unique.size(); ++i)
      carried[i] = wanted.count({static_cast<long long>(unique[i].first), static_cast<long long>(unique[i].second)});
  }
  sg4::NetZone* zone = PairZone::create("fabric")->get_iface(); // a route costs what it holds
  // versions[rank]: (first epoch, host) of each of the GPU's hosts, oldest first.
  std::vector<std::vector<std::pair<size_t, sg4::Host*>>> versions(n);
  auto new_host = [&](size_t rank, size_t epoch) {
    const auto& node = (*graphs.front())[gpu_nodes[rank]];
    const std::string name = epoch ? node.name + std::string("@").append(std::to_string(epoch)) : node.name;
    versions[rank].emplace_back(epoch, zone->create_host(name, gpu_flops_per_s.at(rank))->seal());
  };
  for (size_t rank = 0; rank < n; ++rank)
    new_host(rank, 0);
  std::unordered_map<std::string, sg4::SplitDuplexLink*> links; // later graphs lack some of the first's edges
  std::vector<sg4::SplitDuplexLink*> link_at(boost::num_edges(*graphs.front())); // by edge index
  // Energy and class are looked up for the links of routes only: with one epoch, those of the first
  // routes (a 131k-GPU fabric's name tables were most of a small job's set-up, sim/jobs).
  std::vector<bool> on_a_route(link_at.size(), graphs.size() > 1);
  for (const uint64_t slot : first_routes.slots)
    on_a_route[slot / 2] = true;
  for (auto [e, end] = boost::edges(*graphs.front()); e != end; ++e) {
    const topologies::FabricLink& spec = (*graphs.front())[*e];
    sg4::SplitDuplexLink* link = zone->create_split_duplex_link(spec.name, spec.bytes_per_s);
    link->set_latency(spec.latency_s)->seal();
    if (graphs.size() > 1) // later epochs find links by name
      links[spec.name] = link;
    link_at[topologies::edge_index(*graphs.front(), *e)] = link;
    if (on_a_route[topologies::edge_index(*graphs.front(), *e)])
      note_link(platform, spec);
  }
  // A link's UP direction runs from its lower-numbered vertex to its higher one.
  auto direction = [](bool up) { return up ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN; };
  // The first epoch: every pair's route as data, and SimGrid's routes for those it carries.
  for (size_t i = 0; i < unique.size(); ++i) {
    const auto [src, dst] = unique[i];
    PairRoute& data = platform.routes[{static_cast<long long>(src), static_cast<long long>(dst)}];
    std::vector<sg4::LinkInRoute> route;
    for (size_t h = first_routes.begin[i]; h < first_routes.begin[i + 1]; ++h) {
      const bool forward = first_routes.slots[h] % 2;
      sg4::SplitDuplexLink* link = link_at[first_routes.slots[h] / 2];
      sg4::Link* way = forward ? link->get_link_up() : link->get_link_down();
      data.links.push_back(way);
      data.latency_s += way->get_latency();
      if (carried[i])
        route.emplace_back(link, direction(forward));
    }
    if (carried[i])
      zone->add_route(versions[src].front().second->get_netpoint(), versions[dst].front().second->get_netpoint(),
                      nullptr, nullptr, route, false);
  }
  auto note_epoch = [&] {
    std::vector<sg4::Host*> current(n);
    for (size_t rank = 0; rank < n; ++rank)
      current[rank] = versions[rank].back().second;
    platform.epoch_gpus.push_back(std::move(current));
  };
  note_epoch();
  if (graphs.size() == 1) {
    platform.gpus = platform.epoch_gpus.front();
    zone->seal();
    return platform;
  }
  // Later epochs. Each pair's newest route, as (link name, traversed UP) hops.
  std::vector<const std::string*> name_at(boost::num_edges(*graphs.front())); // by edge index
  for (auto [e, end] = boost::edges(*graphs.front()); e != end; ++e)
    name_at[topologies::edge_index(*graphs.front(), *e)] = &(*graphs.front())[*e].name;
  std::vector<std::vector<std::pair<std::string, bool>>> route_links(unique.size());
  for (size_t i = 0; i < unique.size(); ++i)
    for (size_t h = first_routes.begin[i]; h < first_routes.begin[i + 1]; ++h)
      route_links[i].emplace_back(*name_at[first_routes.slots[h] / 2], first_routes.slots[h] % 2);
  // Each later graph has its own edge numbers (its links are a subset of the first).
  for (size_t m = 1; m < graphs.size(); ++m) {
    const FabricGraph& graph = *graphs[m];
    std::vector<bool> moved(n, false), cut(unique.size(), false);
    topologies::RouteFinder routes(graph);
    std::unordered_map<std::string, boost::graph_traits<FabricGraph>::edge_descriptor> present;
    for (auto [e, end] = boost::edges(graph); e != end; ++e)
      present.emplace(graph[*e].name, *e);
    for (size_t i = 0; i < unique.size(); ++i) {
      cut[i] = std::any_of(route_links[i].begin(), route_links[i].end(),
                           [&](const auto& hop) { return !present.count(hop.first); });
      if (cut[i])
        moved[unique[i].first] = moved[unique[i].second] = true;
    }
    for (size_t rank = 0; rank < n; ++rank)
      if (moved[rank])
        new_host(rank, m);
    // Routes that stay (messages may still be on them) load their links, so that the new ones
    // spread around them.
    for (size_t i = 0; i < unique.size(); ++i)
      if (!cut[i]) {
        std::vector<topologies::RouteHop> hops;
        for (const auto& [name, up] : route_links[i])
          hops.push_back({present.at(name), up});
        routes.add_load(hops);
      }
    const auto gpus = topologies::gpu_vertices(graph);
    // New routes around the links down, in one batch (one search per destination), in pair order.
    std::vector<size_t> rerouted;
    std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>> requests;
    for (size_t i = 0; i < unique.size(); ++i)
      if (cut[i] && (moved[unique[i].first] || moved[unique[i].second])) {
        rerouted.push_back(i);
        requests.emplace_back(gpus[unique[i].first], gpus[unique[i].second]);
      }
    const auto new_routes = routes.routes(requests);
    for (size_t k = 0; k < rerouted.size(); ++k) {
      route_links[rerouted[k]].clear();
      for (const auto& hop : new_routes[k])
        route_links[rerouted[k]].emplace_back(graph[hop.edge].name, hop.forward);
    }
    for (size_t i = 0; i < unique.size(); ++i) {
      const auto [src, dst] = unique[i];
      if (!moved[src] && !moved[dst])
        continue; // both keep their hosts, and the route between them avoids every link down so far
      std::vector<sg4::LinkInRoute> route;
      for (const auto& [name, up] : route_links[i])
        route.emplace_back(links.at(name), direction(up));
      // A message starts when its later side posts it: hosts of epochs e and f take the route of
      // max(e, f), here every pair of hosts that includes one new in this epoch.
      for (const auto& [e, from] : versions[src])
        for (const auto& [f, to] : versions[dst])
          if (std::max(e, f) == m)
            zone->add_route(from->get_netpoint(), to->get_netpoint(), nullptr, nullptr, route, false);
    }
    note_epoch();
  }
  platform.gpus = platform.epoch_gpus.front();
  zone->seal();
  return platform;
}

} // namespace

bool distinct_pairs_first(const std::vector<std::pair<long long, long long>>& pairs) {
  std::unordered_set<std::pair<long long, long long>, RankPairHash> seen;
  bool repeats = false; // a pair seen before: every later new pair comes too late
  for (const auto& pair : pairs) {
    const bool distinct = pair.first != pair.second && seen.insert(pair).second;
    if (distinct && repeats)
      return false;
    repeats = repeats || !distinct;
  }
  return true;
}

size_t Platform::epoch_at(double t_s) const {
  size_t e = 0;
  while (e + 1 < epoch_start_s.size() && epoch_start_s[e + 1] <= t_s)
    ++e;
  return e;
}

Platform build_platform(const FabricGraph& graph, const std::vector<double>& gpu_flops_per_s,
                        const std::vector<std::pair<long long, long long>>& pairs,
                        const std::vector<FabricGraph>& later_graphs,
                        const std::vector<double>& later_start_s, const RouteNeeds& needs,
                        std::shared_ptr<topologies::RouteFinder> finder,
                        const topologies::FlatRoutes* pair_routes) {
  if (!is_star(graph)) {
    std::vector<const FabricGraph*> graphs{&graph};
    std::vector<double> start_s{0.0};
    for (size_t i = 0; i < later_graphs.size(); ++i) {
      graphs.push_back(&later_graphs[i]);
      start_s.push_back(later_start_s.at(i));
    }
    return build_routed_platform(graphs, start_s, gpu_flops_per_s, pairs, needs, std::move(finder),
                                 pair_routes);
  }
  Platform platform;
  const auto gpus = topologies::gpu_vertices(graph);
  auto* zone = sg4::create_star_zone("fabric");
  std::vector<std::pair<sg4::Link*, sg4::Link*>> up_down; // by rank
  std::vector<uint64_t> edge_ids;                          // by rank: its link's edge index
  for (auto v : gpus) {
    sg4::Host* host =
        zone->create_host(graph[v].name, gpu_flops_per_s.at(static_cast<size_t>(graph[v].gpu_rank)))->seal();
    const auto edge = *boost::out_edges(v, graph).first;
    const topologies::FabricLink& spec = graph[edge];
    sg4::SplitDuplexLink* link = zone->create_split_duplex_link(spec.name, spec.bytes_per_s);
    link->set_latency(spec.latency_s)->seal();
    // UP carries what the GPU sends, DOWN what it receives: full duplex.
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    note_link(platform, spec);
    platform.gpus.push_back(host);
    up_down.emplace_back(link->get_link_up(), link->get_link_down());
    edge_ids.push_back(topologies::edge_index(graph, edge));
  }
  // A star's route: the sender's UP, the receiver's DOWN (SimGrid's star zone, implicit).
  collectives::RouteLinks ids;
  for (const auto& [src, dst] : pairs)
    if (src != dst) {
      PairRoute& data = platform.routes[{src, dst}];
      if (!data.links.empty())
        continue;
      data.links = {up_down[size_t(src)].first, up_down[size_t(dst)].second};
      data.latency_s = 0.0;
      for (const sg4::Link* link : data.links)
        data.latency_s += link->get_latency();
      ids[{src, dst}] = {2 * edge_ids[size_t(src)] + 1, 2 * edge_ids[size_t(dst)]};
    }
  if (needs)
    needs(ids); // a star zone's routes cost nothing: SimGrid has them all
  platform.epoch_gpus = {platform.gpus};
  platform.epoch_start_s = {0.0};
  zone->seal();
  return platform;
}

} // namespace memwall::sim
