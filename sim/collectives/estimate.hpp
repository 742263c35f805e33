// Alpha-beta estimate of a schedule on a fabric graph: per round, the most loaded link direction
// (bytes of all flows crossing it over its bandwidth) plus the longest route latency times
// (1 + extra_latency_steps). Used by `collective: auto`; the simulation itself does not use it.
#pragma once

#include "schedule.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/fabric_routes.hpp"

#include <utility>
#include <vector>

namespace memwall::collectives {

double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph);
// The same on given routes: every flow's, round after round (as route_requests asks for them).
double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph,
                        const topologies::FlatRoutes& routes);
// The same, round by round: its busiest link direction's time, its longest route latency, and its
// steps (1 + extra_latency_steps); the estimate is the sum of busiest + latency x steps.
struct RoundEstimate {
  double busiest_s, route_latency_s, steps;
};
std::vector<RoundEstimate> estimate_rounds(const Schedule& schedule, const topologies::FabricGraph& graph,
                                           const topologies::FlatRoutes& routes);
// Every flow of the schedule as a (source, destination) route request, round after round.
std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>>
route_requests(const Schedule& schedule, const topologies::FabricGraph& graph);

} // namespace memwall::collectives
