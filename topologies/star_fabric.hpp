// The `star` fabric: N GPUs, each with one full-duplex link to one non-blocking switch.
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"

namespace memwall::topologies {

FabricGraph build_star_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
