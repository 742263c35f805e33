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
  // All rounds' routes in one batch: one search per destination, not one per destination and round.
  return estimate_seconds(schedule, graph,
                          topologies::RouteFinder(graph).flat_routes(route_requests(schedule, graph)));
}

double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph,
                        const topologies::FlatRoutes& hops) {
  double total = 0;
  for (const RoundEstimate& r : estimate_rounds(schedule, graph, hops))
    total += r.busiest_s + r.route_latency_s * r.steps;
  return total;
}

std::vector<RoundEstimate> estimate_rounds(const Schedule& schedule, const topologies::FabricGraph& graph,
                                           const topologies::FlatRoutes& hops) {
  std::vector<double> bandwidth(boost::num_edges(graph)), latency_s(boost::num_edges(graph));
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const size_t k = topologies::edge_index(graph, *e);
    bandwidth[k] = graph[*e].bytes_per_s;
    latency_s[k] = graph[*e].latency_s;
  }
  std::vector<RoundEstimate> out;
  size_t next = 0;
  std::vector<double> load(2 * bandwidth.size(), 0.0); // bytes by 2 x edge index + direction
  std::vector<size_t> used;                             // this round's entries of `load`
  for (const Round& round : schedule.rounds) {
    double latency = 0;
    for (const Flow& f : round.flows) {
      double route_latency = 0;
      for (size_t h = hops.begin[next]; h < hops.begin[next + 1]; ++h) {
        const size_t slot = hops.slots[h];
        if (load[slot] == 0.0)
          used.push_back(slot);
        load[slot] += f.bytes;
        route_latency += latency_s[slot / 2];
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
    out.push_back({busiest, latency, 1.0 + round.extra_latency_steps});
  }
  return out;
}

} // namespace memwall::collectives
