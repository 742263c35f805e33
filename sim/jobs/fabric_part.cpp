#include "sim/jobs/fabric_part.hpp"

#include "topologies/fabric_routes.hpp"

#include <set>

namespace memwall::sim::jobs {

using topologies::FabricGraph;
using topologies::NodeKind;

FabricPart fabric_part(const FabricGraph& fabric, long long gpus_per_server, const std::vector<long long>& servers) {
  const size_t n = boost::num_vertices(fabric);
  FabricPart part;
  bool gpu_to_gpu = false;
  for (auto [e, end] = boost::edges(fabric); e != end; ++e)
    gpu_to_gpu = gpu_to_gpu || (fabric[boost::source(*e, fabric)].kind == NodeKind::Gpu &&
                                fabric[boost::target(*e, fabric)].kind == NodeKind::Gpu);
  const std::set<long long> used(servers.begin(), servers.end());
  std::vector<bool> keep(n, true);
  if (!gpu_to_gpu) {
    for (size_t v = 0; v < n; ++v)
      if (fabric[v].kind == NodeKind::Gpu && !used.count(fabric[v].gpu_rank / gpus_per_server))
        keep[v] = false;
    // Switches and NICs with one kept link or none: dead ends, until none is left.
    std::vector<long long> degree(n, 0);
    for (auto [e, end] = boost::edges(fabric); e != end; ++e)
      if (keep[boost::source(*e, fabric)] && keep[boost::target(*e, fabric)]) {
        ++degree[boost::source(*e, fabric)];
        ++degree[boost::target(*e, fabric)];
      }
    std::vector<size_t> dead;
    for (size_t v = 0; v < n; ++v)
      if (keep[v] && fabric[v].kind != NodeKind::Gpu && degree[v] <= 1)
        dead.push_back(v);
    while (!dead.empty()) {
      const size_t v = dead.back();
      dead.pop_back();
      if (!keep[v])
        continue;
      keep[v] = false;
      for (auto [a, end] = boost::adjacent_vertices(v, fabric); a != end; ++a)
        if (keep[*a] && fabric[*a].kind != NodeKind::Gpu && --degree[*a] <= 1)
          dead.push_back(*a);
    }
  }
  // The kept vertices in their order, GPUs renumbered by fabric rank, servers by first appearance.
  part.rank.assign(topologies::gpu_vertices(fabric).size(), -1);
  long long next_rank = 0;
  for (const auto v : topologies::gpu_vertices(fabric))
    if (keep[v])
      part.rank[size_t(fabric[v].gpu_rank)] = next_rank++;
  std::vector<size_t> vertex(n);
  for (size_t v = 0; v < n; ++v) {
    if (!keep[v])
      continue;
    topologies::FabricNode node = fabric[v];
    if (node.kind == NodeKind::Gpu) {
      node.gpu_rank = part.rank[size_t(node.gpu_rank)];
      node.node = node.gpu_rank / gpus_per_server;
    }
    vertex[v] = boost::add_vertex(node, part.graph);
  }
  for (auto [e, end] = boost::edges(fabric); e != end; ++e) {
    const size_t a = boost::source(*e, fabric), b = boost::target(*e, fabric);
    if (keep[a] && keep[b]) {
      topologies::FabricLink link = fabric[*e];
      link.index = topologies::FabricLink::kUnnumbered;
      boost::add_edge(vertex[a], vertex[b], link, part.graph);
    }
  }
  topologies::number_edges(part.graph);
  return part;
}

} // namespace memwall::sim::jobs
