// Runs one simulation in a forked child process (SimGrid allows one engine per process) and
// returns its JSON record, or throws with the child's error message.
#pragma once

#include "scenario.hpp"

#include <nlohmann/json.hpp>

namespace memwall::sim {

nlohmann::json run_isolated(const Scenario& scenario);

} // namespace memwall::sim
