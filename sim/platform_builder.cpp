#include "platform_builder.hpp"

#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "topologies/fabric_routes.hpp"

namespace memwall::sim {

namespace sg4 = simgrid::s4u;
using topologies::FabricGraph;
using topologies::NodeKind;

namespace {

// Both directions of a split-duplex link carry the fabric link's energy and class.
void note_link(Platform& platform, const topologies::FabricLink& spec) {
  for (const char* dir : {"_UP", "_DOWN"}) {
    platform.pj_per_bit[spec.name + dir] = spec.pj_per_bit;
    platform.link_class[spec.name + dir] = spec.link_class;
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

// Epoch-e hosts of every GPU: epoch 0 keeps the fabric's names, later ones add "@e".
std::vector<sg4::Host*> create_hosts(sg4::NetZone* zone, const FabricGraph& graph,
                                     const std::vector<double>& gpu_flops_per_s, size_t epoch) {
  std::vector<sg4::Host*> hosts;
  const std::string suffix = epoch ? std::string("@").append(std::to_string(epoch)) : std::string();
  for (auto v : topologies::gpu_vertices(graph))
    hosts.push_back(
        zone->create_host(graph[v].name + suffix, gpu_flops_per_s.at(static_cast<size_t>(graph[v].gpu_rank)))
            ->seal());
  return hosts;
}

Platform build_routed_platform(const std::vector<const FabricGraph*>& graphs,
                               const std::vector<double>& start_s, const std::vector<double>& gpu_flops_per_s,
                               const std::vector<std::pair<long long, long long>>& pairs) {
  Platform platform;
  platform.epoch_start_s = start_s;
  auto* zone = sg4::create_full_zone("fabric");
  for (size_t e = 0; e < graphs.size(); ++e)
    platform.epoch_gpus.push_back(create_hosts(zone, *graphs[e], gpu_flops_per_s, e));
  platform.gpus = platform.epoch_gpus.front();
  std::unordered_map<std::string, sg4::Link*> links; // later graphs lack some of the first's edges
  for (auto [e, end] = boost::edges(*graphs.front()); e != end; ++e) {
    const topologies::FabricLink& spec = (*graphs.front())[*e];
    links[spec.name] =
        zone->create_split_duplex_link(spec.name, spec.bytes_per_s)->set_latency(spec.latency_s)->seal();
    note_link(platform, spec);
  }
  // Distinct pairs in the collective's order: balanced routes depend on the order they are asked for.
  std::set<std::pair<long long, long long>> seen;
  std::vector<std::pair<long long, long long>> unique;
  for (const auto& pair : pairs)
    if (pair.first != pair.second && seen.insert(pair).second)
      unique.push_back(pair);
  // A message between epochs e and f starts when the later side posts it: route it around the links
  // down by epoch max(e, f). One graph at a time, as RouteFinder's edge index caches one graph.
  for (size_t m = 0; m < graphs.size(); ++m) {
    const FabricGraph& graph = *graphs[m];
    const auto gpus = topologies::gpu_vertices(graph);
    topologies::RouteFinder routes(graph);
    for (const auto& [src, dst] : unique) {
      std::vector<sg4::LinkInRoute> route;
      // A link's UP direction runs from its lower-numbered vertex to its higher one.
      for (const auto& hop : routes.route(gpus[size_t(src)], gpus[size_t(dst)]))
        route.emplace_back(links.at(graph[hop.edge].name),
                           hop.forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
      for (size_t e = 0; e <= m; ++e)
        for (size_t f = 0; f <= m; ++f)
          if (std::max(e, f) == m)
            zone->add_route(platform.epoch_gpus[e][size_t(src)]->get_netpoint(),
                            platform.epoch_gpus[f][size_t(dst)]->get_netpoint(), nullptr, nullptr, route,
                            false);
    }
  }
  zone->seal();
  return platform;
}

} // namespace

size_t Platform::epoch_at(double t_s) const {
  size_t e = 0;
  while (e + 1 < epoch_start_s.size() && epoch_start_s[e + 1] <= t_s)
    ++e;
  return e;
}

Platform build_platform(const FabricGraph& graph, const std::vector<double>& gpu_flops_per_s,
                        const std::vector<std::pair<long long, long long>>& pairs,
                        const std::vector<FabricGraph>& later_graphs,
                        const std::vector<double>& later_start_s) {
  if (!is_star(graph)) {
    std::vector<const FabricGraph*> graphs{&graph};
    std::vector<double> start_s{0.0};
    for (size_t i = 0; i < later_graphs.size(); ++i) {
      graphs.push_back(&later_graphs[i]);
      start_s.push_back(later_start_s.at(i));
    }
    return build_routed_platform(graphs, start_s, gpu_flops_per_s, pairs);
  }
  Platform platform;
  const auto gpus = topologies::gpu_vertices(graph);
  auto* zone = sg4::create_star_zone("fabric");
  for (auto v : gpus) {
    sg4::Host* host =
        zone->create_host(graph[v].name, gpu_flops_per_s.at(static_cast<size_t>(graph[v].gpu_rank)))->seal();
    const auto edge = *boost::out_edges(v, graph).first;
    const topologies::FabricLink& spec = graph[edge];
    sg4::Link* link =
        zone->create_split_duplex_link(spec.name, spec.bytes_per_s)->set_latency(spec.latency_s)->seal();
    // UP carries what the GPU sends, DOWN what it receives: full duplex.
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    note_link(platform, spec);
    platform.gpus.push_back(host);
  }
  platform.epoch_gpus = {platform.gpus};
  platform.epoch_start_s = {0.0};
  zone->seal();
  return platform;
}

} // namespace memwall::sim
