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
// The same with a finder shared between estimates (its searches kept, its loads cleared first).
// `hops`: when given, receives every flow's route (round after round, as route_requests).
double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph,
                        topologies::RouteFinder& routes,
                        std::vector<std::vector<topologies::RouteHop>>* hops = nullptr);
// Every flow of the schedule as a (source, destination) route request, round after round.
std::vector<std::pair<topologies::FabricVertex, topologies::FabricVertex>>
route_requests(const Schedule& schedule, const topologies::FabricGraph& graph);

} // namespace memwall::collectives
