// Runs one scenario in a SimGrid engine and summarises it. SimGrid allows one engine per process:
// call this once per process (the CLI forks a process per scenario).
#pragma once

#include "model/step_metrics.hpp"
#include "run_recorder.hpp"
#include "scenario.hpp"

#include <vector>

namespace memwall::sim {

struct RunResult {
  model::StepMetrics metrics;   // per GPU per step, means over GPUs
  double makespan_s = 0;        // whole run, all steps
  double sim_wall_s = 0;        // host wall-clock time of the simulation
  long long activities = 0;     // simulated activities (executions, communications, sleeps)
  std::vector<GpuTotals> per_gpu;
};

RunResult run_simulation(const Scenario& scenario);

} // namespace memwall::sim
