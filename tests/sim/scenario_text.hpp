// A scenario from YAML text, through the loader a scenario file goes through (catalog models,
// validation, defaults), for tests that derive their expectations from the text they write.
#pragma once

#include "model/gpu_catalog.hpp"
#include "model/input_node.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>

namespace memwall::test {

inline sim::Scenario scenario_from_text(const std::string& yaml, const std::string& label) {
  return sim::parse_scenario(model::InputNode::load_string(yaml, label), model::GpuCatalog::builtin());
}

} // namespace memwall::test
