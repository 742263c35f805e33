// Reads a fabric description (inline mapping in a scenario) and builds its graph.
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"
#include "model/input_node.hpp"

#include <string>

namespace memwall::topologies {

FabricSpec parse_fabric(const model::InputNode& node);

// The fabric as resolved (all defaults filled in, SI units), as one line of YAML.
std::string describe_fabric(const FabricSpec& spec);

// Builds and validates the graph for N GPUs; problems become InputErrors at the fabric's line.
FabricGraph build_fabric_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
