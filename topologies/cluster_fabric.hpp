// `cluster`: servers of G GPUs on an NVSwitch, NICs (per GPU or per server) into a two-tier fat-tree
// with a configurable oversubscription, rail-optimized or not.
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"

namespace memwall::topologies {

FabricGraph build_cluster_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
