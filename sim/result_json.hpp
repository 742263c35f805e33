// RunResult <-> JSON: the `run --json` record, also how a forked simulation reports to its parent.
#pragma once

#include "simulation.hpp"

#include <nlohmann/json.hpp>

namespace memwall::sim {

nlohmann::json result_to_json(const Scenario& scenario, const RunResult& result);
model::StepMetrics metrics_from_json(const nlohmann::json& record);

} // namespace memwall::sim
