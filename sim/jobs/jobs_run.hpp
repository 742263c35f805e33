// Several jobs in one simulation (issue 32): every job's actors run on its own hosts of one shared
// platform, so their flows meet on the links they share and SimGrid's flow model divides those
// links between them. Each job is also run alone (same servers, nothing else on the fabric) for its
// slowdown. One SimGrid engine per process: run_jobs runs in a forked child (run_jobs_isolated).
#pragma once

#include "sim/engine/simulation.hpp"
#include "sim/jobs/jobs_spec.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace memwall::sim::jobs {

// Simulates the jobs `which` (indices into spec.jobs) together, in this process. A job's result
// counts from its start: makespan_s is from its start to its last GPU's end.
// With `output` tracing: the HDF5 trace and timeline of these jobs (sim/jobs/jobs_trace.hpp).
std::vector<RunResult> run_jobs(const JobsSpec& spec, const std::vector<size_t>& which,
                                const OutputOptions& output = {});

// run_jobs in a forked child; the records (sim/output/result_json) in the order of `which`.
std::vector<nlohmann::json> run_jobs_isolated(const JobsSpec& spec, const std::vector<size_t>& which);

// All jobs together and each alone: one record per job with "alone_step_time_s" and "slowdown"
// added, and the cluster's summary. Throws with the reason when a simulation fails.
// `output`: the shared run's trace and timeline (written only once every simulation has succeeded).
nlohmann::json run_jobs_with_baselines(const JobsSpec& spec, const OutputOptions& output = {});

} // namespace memwall::sim::jobs
