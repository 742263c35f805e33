// Alpha-beta estimate of a schedule on a fabric graph: per round, the most loaded link direction
// (bytes of all flows crossing it over its bandwidth) plus the longest route latency times
// (1 + extra_latency_steps). Used by `collective: auto`; the simulation itself does not use it.
#pragma once

#include "schedule.hpp"
#include "topologies/fabric_graph.hpp"

namespace memwall::collectives {

double estimate_seconds(const Schedule& schedule, const topologies::FabricGraph& graph);

} // namespace memwall::collectives
