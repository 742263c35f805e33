#include "estimate.hpp"

#include "topologies/fabric_routes.hpp"

#include <algorithm>
#include <map>

namespace memwall::collectives {

double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph) {
  topologies::RouteFinder routes(graph);
  const auto gpus = topologies::gpu_vertices(graph);
  // All rounds' routes in one batch: one search per destination, not one per destination and round.
  std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>> requests;
  for (const Round& round : schedule.rounds)
    for (const Flow& f : round.flows)
      requests.emplace_back(gpus[size_t(f.src)], gpus[size_t(f.dst)]);
  const auto hops = routes.routes(requests);
  std::vector<double> bandwidth(boost::num_edges(graph));
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    bandwidth[topologies::edge_index(graph, *e)] = graph[*e].bytes_per_s;
  double total = 0;
  size_t next = 0;
  for (const Round& round : schedule.rounds) {
    std::map<std::pair<size_t, bool>, double> load;
    double latency = 0;
    for (const Flow& f : round.flows) {
      double route_latency = 0;
      for (const auto& hop : hops[next]) {
        load[{topologies::edge_index(graph, hop.edge), hop.forward}] += f.bytes;
        route_latency += graph[hop.edge].latency_s;
      }
      ++next;
      latency = std::max(latency, route_latency);
    }
    double busiest = 0;
    for (const auto& [link, bytes] : load)
      busiest = std::max(busiest, bytes / bandwidth[link.first]);
    total += busiest + latency * (1.0 + round.extra_latency_steps);
  }
  return total;
}

} // namespace memwall::collectives
