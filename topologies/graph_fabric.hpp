// `graph`: an explicit list of nodes (gpu / switch / nic) and links, for fabrics that do not exist yet.
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"

namespace memwall::topologies {

FabricGraph build_explicit_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
