#include "estimate.hpp"

#include "topologies/fabric_routes.hpp"

#include <algorithm>
#include <map>

namespace memwall::collectives {

double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph) {
  topologies::RouteFinder routes(graph);
  const auto gpus = topologies::gpu_vertices(graph);
  double total = 0;
  for (const Round& round : schedule.rounds) {
    std::map<std::pair<size_t, bool>, double> load;
    double latency = 0;
    for (const Flow& f : round.flows) {
      double route_latency = 0;
      for (const auto& hop : routes.route(gpus[size_t(f.src)], gpus[size_t(f.dst)])) {
        load[{topologies::edge_index(graph, hop.edge), hop.forward}] += f.bytes;
        route_latency += graph[hop.edge].latency_s;
      }
      latency = std::max(latency, route_latency);
    }
    std::vector<double> bandwidth(boost::num_edges(graph));
    for (auto [e, end] = boost::edges(graph); e != end; ++e)
      bandwidth[topologies::edge_index(graph, *e)] = graph[*e].bytes_per_s;
    double busiest = 0;
    for (const auto& [link, bytes] : load)
      busiest = std::max(busiest, bytes / bandwidth[link.first]);
    total += busiest + latency * (1.0 + round.extra_latency_steps);
  }
  return total;
}

} // namespace memwall::collectives
