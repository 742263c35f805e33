// `dragonfly`: groups of routers with all-to-all local links and one global link per pair of groups.
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"

namespace memwall::topologies {

FabricGraph build_dragonfly_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
