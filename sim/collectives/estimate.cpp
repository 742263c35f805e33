#include "estimate.hpp"

#include "topologies/fabric_routes.hpp"

#include <algorithm>

namespace memwall::collectives {

std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>>
route_requests(const Schedule& schedule, const topologies::FabricGraph& graph) {
  const auto gpus = topologies::gpu_vertices(graph);
  std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>> requests;
  for (const Round& round : schedule.rounds)
    for (const Flow& f : round.flows)
      requests.emplace_back(gpus[size_t(f.src)], gpus[size_t(f.dst)]);
  return requests;
}

double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph) {
  topologies::RouteFinder routes(graph);
  return estimate_seconds(schedule, graph, routes);
}

double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph,
                        topologies::RouteFinder& routes, std::vector<std::vector<topologies::RouteHop>>* hops_out) {
  routes.clear_loads();
  // All rounds' routes in one batch: one search per destination, not one per destination and round.
  auto hops = routes.routes(route_requests(schedule, graph));
  std::vector<double> bandwidth(boost::num_edges(graph));
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    bandwidth[topologies::edge_index(graph, *e)] = graph[*e].bytes_per_s;
  double total = 0;
  size_t next = 0;
  std::vector<double> load(2 * bandwidth.size(), 0.0); // bytes by 2 x edge index + direction
  std::vector<size_t> used;                             // this round's entries of `load`
  for (const Round& round : schedule.rounds) {
    double latency = 0;
    for (const Flow& f : round.flows) {
      double route_latency = 0;
      for (const auto& hop : hops[next]) {
        const size_t slot = 2 * hop.index + hop.forward;
        if (load[slot] == 0.0)
          used.push_back(slot);
        load[slot] += f.bytes;
        route_latency += graph[hop.edge].latency_s;
      }
      ++next;
      latency = std::max(latency, route_latency);
    }
    double busiest = 0;
    for (const size_t slot : used) {
      busiest = std::max(busiest, load[slot] / bandwidth[slot / 2]);
      load[slot] = 0.0;
    }
    used.clear();
    total += busiest + latency * (1.0 + round.extra_latency_steps);
  }
  if (hops_out)
    *hops_out = std::move(hops);
  return total;
}

} // namespace memwall::collectives
