#include "platform_builder.hpp"

#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <set>
#include <stdexcept>

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

Platform build_routed_platform(const FabricGraph& graph, const std::vector<double>& gpu_flops_per_s,
                               const std::vector<std::pair<long long, long long>>& pairs) {
  Platform platform;
  auto* zone = sg4::create_full_zone("fabric");
  const auto gpus = topologies::gpu_vertices(graph);
  for (auto v : gpus)
    platform.gpus.push_back(
        zone->create_host(graph[v].name, gpu_flops_per_s.at(static_cast<size_t>(graph[v].gpu_rank)))->seal());
  std::vector<sg4::Link*> links(boost::num_edges(graph));
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const topologies::FabricLink& spec = graph[*e];
    links[topologies::edge_index(graph, *e)] =
        zone->create_split_duplex_link(spec.name, spec.bytes_per_s)->set_latency(spec.latency_s)->seal();
    note_link(platform, spec);
  }
  topologies::RouteFinder routes(graph);
  std::set<std::pair<long long, long long>> done;
  for (const auto& [src, dst] : pairs) {
    if (src == dst || !done.insert({src, dst}).second)
      continue;
    std::vector<sg4::LinkInRoute> route;
    // A link's UP direction runs from its lower-numbered vertex to its higher one.
    for (const auto& hop : routes.route(gpus[size_t(src)], gpus[size_t(dst)]))
      route.emplace_back(links[topologies::edge_index(graph, hop.edge)],
                         hop.forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    zone->add_route(platform.gpus[size_t(src)]->get_netpoint(), platform.gpus[size_t(dst)]->get_netpoint(), nullptr,
                    nullptr, route, false);
  }
  zone->seal();
  return platform;
}

} // namespace

Platform build_platform(const FabricGraph& graph, const std::vector<double>& gpu_flops_per_s,
                        const std::vector<std::pair<long long, long long>>& pairs) {
  if (!is_star(graph))
    return build_routed_platform(graph, gpu_flops_per_s, pairs);
  Platform platform;
  const auto gpus = topologies::gpu_vertices(graph);
  auto* zone = sg4::create_star_zone("fabric");
  for (auto v : gpus) {
    sg4::Host* host =
        zone->create_host(graph[v].name, gpu_flops_per_s.at(static_cast<size_t>(graph[v].gpu_rank)))->seal();
    const auto edge = *boost::out_edges(v, graph).first;
    const topologies::FabricLink& spec = graph[edge];
    sg4::Link* link = zone->create_split_duplex_link(spec.name, spec.bytes_per_s)->set_latency(spec.latency_s)->seal();
    // UP carries what the GPU sends, DOWN what it receives: full duplex.
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    note_link(platform, spec);
    platform.gpus.push_back(host);
  }
  zone->seal();
  return platform;
}

} // namespace memwall::sim
