#include "fabric_graph.hpp"

#include <boost/graph/connected_components.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace memwall::topologies {

std::string gpu_host_name(long long rank) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "gpu%06lld", rank);
  return buffer;
}

std::vector<FabricVertex> gpu_vertices(const FabricGraph& graph) {
  std::vector<FabricVertex> gpus;
  for (auto [v, end] = boost::vertices(graph); v != end; ++v)
    if (graph[*v].kind == NodeKind::Gpu)
      gpus.push_back(*v);
  std::vector<FabricVertex> ordered(gpus.size());
  for (FabricVertex v : gpus)
    ordered.at(static_cast<size_t>(graph[v].gpu_rank)) = v;
  return ordered;
}

long long gpus_per_node(const FabricGraph& graph) {
  std::vector<long long> count;
  for (auto v : gpu_vertices(graph)) {
    const auto node = static_cast<size_t>(std::max(0LL, graph[v].node));
    if (count.size() <= node)
      count.resize(node + 1, 0);
    ++count[node];
  }
  for (long long c : count)
    if (c != count.front())
      return 1;
  return count.empty() ? 1 : count.front();
}

void validate_fabric_graph(const FabricGraph& graph) {
  std::set<std::string> names;
  long long gpus = 0;
  for (auto [v, end] = boost::vertices(graph); v != end; ++v) {
    if (!names.insert(graph[*v].name).second)
      throw std::invalid_argument("duplicate node name '" + graph[*v].name + "'");
    gpus += graph[*v].kind == NodeKind::Gpu;
  }
  if (gpus == 0)
    throw std::invalid_argument("the fabric has no GPU");
  std::vector<bool> seen(static_cast<size_t>(gpus), false);
  for (auto [v, end] = boost::vertices(graph); v != end; ++v) {
    if (graph[*v].kind != NodeKind::Gpu)
      continue;
    const long long r = graph[*v].gpu_rank;
    if (r < 0 || r >= gpus || seen[static_cast<size_t>(r)])
      throw std::invalid_argument("GPU ranks must be 0.." + std::to_string(gpus - 1) + " without repeats");
    seen[static_cast<size_t>(r)] = true;
  }
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const FabricLink& link = graph[*e];
    if (!(link.bytes_per_s > 0))
      throw std::invalid_argument("link '" + link.name + "' has a non-positive bandwidth");
    if (link.latency_s < 0)
      throw std::invalid_argument("link '" + link.name + "' has a negative latency");
    if (!names.insert(link.name).second)
      throw std::invalid_argument("duplicate link name '" + link.name + "'");
  }
  std::vector<int> component(boost::num_vertices(graph));
  if (boost::num_vertices(graph) > 1 && boost::connected_components(graph, component.data()) != 1)
    throw std::invalid_argument("the fabric graph is disconnected: some GPUs cannot reach each other");
}

} // namespace memwall::topologies
