// Reads a fabric description (an inline mapping in a scenario, or the name of a fabric file) and
// builds its graph.
#pragma once

#include "fabric_graph.hpp"
#include "fabric_spec.hpp"
#include "model/input_node.hpp"

#include <string>

namespace memwall::topologies {

// A mapping, or a string: a path (relative to the scenario's folder) or the name of a fabric in
// the shipped catalog (topologies/<name>.yaml).
FabricSpec parse_fabric(const model::InputNode& node);
FabricSpec load_fabric_file(const std::string& path);

// The folder of the shipped fabric catalog (fixed at build time).
const std::string& fabric_catalog_dir();

// The fabric as resolved (all defaults filled in, SI units), as one line of YAML.
std::string describe_fabric(const FabricSpec& spec);

// Builds and validates the graph for N GPUs; problems become InputErrors at the fabric's line.
FabricGraph build_fabric_graph(const FabricSpec& spec, long long gpus);

} // namespace memwall::topologies
