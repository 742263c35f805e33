#include "star_fabric.hpp"

namespace memwall::topologies {

FabricGraph build_star_graph(const FabricSpec& spec, long long gpus) {
  const bool one_node = spec.kind == "nvlink-node";
  FabricGraph graph;
  const FabricVertex hub = boost::add_vertex(FabricNode{one_node ? "nvswitch" : "switch", NodeKind::Switch}, graph);
  for (long long rank = 0; rank < gpus; ++rank) {
    const std::string name = gpu_host_name(rank);
    const FabricVertex gpu =
        boost::add_vertex(FabricNode{name, NodeKind::Gpu, rank, one_node ? 0 : rank, one_node ? rank : 0}, graph);
    FabricLink link{name + "-link", spec.link_bytes_per_s, spec.link_latency_s, spec.pj_per_bit,
                    one_node ? "nvlink" : "star"};
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
