// Runs one scenario in a SimGrid engine and summarises it. SimGrid allows one engine per process:
// call this once per process (the CLI forks a process per scenario).
#pragma once

#include "model/step_metrics.hpp"
#include "sim/engine/run_recorder.hpp"
#include "sim/scenario/scenario.hpp"
#include "trace/trace_rows.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memwall::sim {

struct OutputOptions {
  std::string trace_path;                  // HDF5 trace; empty: none
  trace::TraceLevel trace_level = trace::TraceLevel::Layer;
  std::string timeline_path;               // Perfetto / Chrome trace JSON; empty: none
  long long timeline_gpus = 64;            // GPUs shown in the timeline
  bool tracing() const { return !trace_path.empty() || !timeline_path.empty(); }
};

struct RunResult {
  model::StepMetrics metrics;   // per GPU per step, means over GPUs
  double makespan_s = 0;        // whole run, all steps
  double sim_wall_s = 0;        // host wall-clock time of the simulation
  long long activities = 0;     // simulated activities (executions, communications, sleeps)
  std::vector<GpuTotals> per_gpu;
  std::string collective;       // the all-reduce algorithm that ran
  // TP ranks whose flows one simulated plane stood for (parallel/planes.hpp): t where the TP ranks'
  // flows mirror one another, else 1 (every flow simulated).
  long long mirrored_planes = 1;
};

RunResult run_simulation(const Scenario& scenario, const OutputOptions& output = {});

// Pure data parallelism as the layout the one engine runs: every GPU a replica, one pipeline stage
// of every layer (the loader leaves these unset without a `parallelism:` key, as may code that builds a
// scenario). Whether it changed anything.
bool complete_data_parallel_layout(Scenario& s);

// The process's SimGrid engine, with the network model memwall's closed forms need (CM02, no cross
// traffic, no TCP window). One per process; run_simulation and collbench each create it.
std::unique_ptr<simgrid::s4u::Engine> create_engine();

// Per GPU per step (means over GPUs) of a finished run whose `scenario.steps` steps took `makespan_s`.
model::StepMetrics summarise_run(const Scenario& scenario, const std::vector<GpuTotals>& totals, double makespan_s);

// Sets SimGrid's stack guard pages off beyond 30,000 actors (Linux's map count); before any actor.
void guard_stacks(long long actors);

struct FaultLog;
// Throws (a stall report) unless every GPU ran to its end and every byte sent was received: SimGrid
// ends a deadlocked run normally, so this is what keeps a stalled run from reporting a result.
void check_run_complete(const std::vector<GpuTotals>& totals, const FaultLog& faults);

} // namespace memwall::sim
