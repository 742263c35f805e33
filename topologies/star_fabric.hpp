// `star` and `nvlink-node`: N GPUs, each with one full-duplex link to one non-blocking switch.
// A star's GPUs are separate servers (G = 1, the seed's idealised IB); an nvlink-node is one server
// whose GPUs share an NVSwitch domain (G = N).
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"

namespace memwall::topologies {

FabricGraph build_star_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
