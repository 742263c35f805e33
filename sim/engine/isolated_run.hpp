// Runs one simulation in a forked child process (SimGrid allows one engine per process) and
// returns its JSON record, or throws with the child's error message. SIGINT / SIGTERM while it runs
// stop the child and remove any half-written output, so an interrupted run leaves no file behind.
#pragma once

#include "sim/scenario/scenario.hpp"
#include "sim/engine/simulation.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace memwall::sim {

nlohmann::json run_isolated(const Scenario& scenario, const OutputOptions& output = {});

// `work` in a forked child (one SimGrid engine per process) that writes no file; its JSON, or throws
// `label: ` and the child's error. The child dies with this process.
nlohmann::json run_forked(const std::string& label, const std::function<nlohmann::json()>& work);

// run_forked in two halves, so that several children run at once: start_forked returns at once;
// finish_forked reads the child's JSON and reaps it (throws as run_forked does).
struct ForkedRun {
  int pid = -1;
  int fd = -1; // the child's JSON arrives here
};
ForkedRun start_forked(const std::function<nlohmann::json()>& work);
nlohmann::json finish_forked(const std::string& label, const ForkedRun& run);

} // namespace memwall::sim
