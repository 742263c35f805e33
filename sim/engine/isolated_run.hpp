// Runs one simulation in a forked child process (SimGrid allows one engine per process) and
// returns its JSON record, or throws with the child's error message. SIGINT / SIGTERM while it runs
// stop the child and remove any half-written output, so an interrupted run leaves no file behind.
#pragma once

#include "sim/scenario/scenario.hpp"
#include "sim/engine/simulation.hpp"

#include <nlohmann/json.hpp>

namespace memwall::sim {

nlohmann::json run_isolated(const Scenario& scenario, const OutputOptions& output = {});

} // namespace memwall::sim
