#include "star_fabric.hpp"

namespace memwall::topologies {

FabricGraph build_star_graph(const FabricSpec& spec, long long gpus) {
  FabricGraph graph;
  const FabricVertex hub = boost::add_vertex(FabricNode{"switch", NodeKind::Switch, -1}, graph);
  for (long long rank = 0; rank < gpus; ++rank) {
    const std::string name = gpu_host_name(rank);
    const FabricVertex gpu = boost::add_vertex(FabricNode{name, NodeKind::Gpu, rank}, graph);
    FabricLink link{name + "-link", spec.link_bytes_per_s, spec.link_latency_s, spec.pj_per_bit};
    if (auto it = spec.gpu_links.find(rank); it != spec.gpu_links.end()) {
      if (it->second.bytes_per_s > 0)
        link.bytes_per_s = it->second.bytes_per_s;
      if (it->second.latency_s >= 0)
        link.latency_s = it->second.latency_s;
    }
    boost::add_edge(gpu, hub, link, graph);
  }
  return graph;
}

} // namespace memwall::topologies
