// RunResult <-> JSON: the `run --json` record, also how a forked simulation reports to its parent.
#pragma once

#include "sim/engine/simulation.hpp"
#include "sim/scenario/reliability_keys.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace memwall::sim {

nlohmann::json result_to_json(const Scenario& scenario, const RunResult& result);
model::StepMetrics metrics_from_json(const nlohmann::json& record);
// What a run's goodput simulation takes from a step's record (step time, facility joules, breakdown).
GoodputInputs goodput_inputs(const Scenario& scenario, const nlohmann::json& record);
// The numeric fields of a record that do not depend on the host (no wall-clock figures), in order.
const std::vector<std::string>& deterministic_record_keys();
// A record's cell for one of those keys, as sweep and plan results files hold it (text as itself,
// numbers in JSON's shortest form; `breakdown_X` is the breakdown's member X).
std::string record_cell(const nlohmann::json& record, const std::string& key);

} // namespace memwall::sim
