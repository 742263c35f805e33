#include "platform_builder.hpp"

#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <stdexcept>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;
using topologies::FabricGraph;
using topologies::NodeKind;

namespace {

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

} // namespace

Platform build_platform(const FabricGraph& graph, double gpu_flops_per_s) {
  Platform platform;
  const auto gpus = topologies::gpu_vertices(graph);
  if (!is_star(graph))
    throw std::invalid_argument("only star fabrics can be simulated so far");
  auto* zone = sg4::create_star_zone("fabric");
  for (auto v : gpus) {
    sg4::Host* host = zone->create_host(graph[v].name, gpu_flops_per_s)->seal();
    const auto edge = *boost::out_edges(v, graph).first;
    const topologies::FabricLink& spec = graph[edge];
    sg4::Link* link = zone->create_split_duplex_link(spec.name, spec.bytes_per_s)->set_latency(spec.latency_s)->seal();
    // UP carries what the GPU sends, DOWN what it receives: full duplex.
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    platform.pj_per_bit[spec.name + "_UP"] = spec.pj_per_bit;
    platform.pj_per_bit[spec.name + "_DOWN"] = spec.pj_per_bit;
    platform.gpus.push_back(host);
  }
  zone->seal();
  return platform;
}

} // namespace memwall::sim
