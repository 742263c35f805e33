// `torus`: GPUs on a 2-D or 3-D grid with wrap-around links to their neighbours (TPU-style).
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"

namespace memwall::topologies {

FabricGraph build_torus_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
