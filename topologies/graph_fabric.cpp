#include "graph_fabric.hpp"

#include <map>
#include <stdexcept>

namespace memwall::topologies {

FabricGraph build_explicit_graph(const FabricSpec& spec, long long gpus) {
  FabricGraph graph;
  std::map<std::string, FabricVertex> by_name;
  long long rank = 0;
  for (const auto& n : spec.graph.nodes) {
    FabricNode node{n.name, n.kind == "gpu" ? NodeKind::Gpu : n.kind == "nic" ? NodeKind::Nic : NodeKind::Switch};
    if (node.kind == NodeKind::Gpu) {
      node.gpu_rank = rank;
      node.node = rank++;
      node.local_rank = 0;
    }
    if (!by_name.emplace(n.name, boost::add_vertex(node, graph)).second)
      throw std::invalid_argument("duplicate node name '" + n.name + "'");
  }
  if (rank != gpus)
    throw std::invalid_argument("the graph has " + std::to_string(rank) + " GPUs, the cluster " +
                                std::to_string(gpus));
  for (const auto& l : spec.graph.links) {
    auto a = by_name.find(l.a), b = by_name.find(l.b);
    if (a == by_name.end() || b == by_name.end())
      throw std::invalid_argument("link " + l.a + " - " + l.b + " names an unknown node '" +
                                  (a == by_name.end() ? l.a : l.b) + "'");
    boost::add_edge(a->second, b->second,
                    FabricLink{l.a + "--" + l.b, l.figures.bytes_per_s, l.figures.latency_s, l.figures.pj_per_bit,
                               "graph"},
                    graph);
  }
  return graph;
}

} // namespace memwall::topologies
