// The trace of several jobs run together (issue 32): one HDF5 file whose every table holds every
// job's rows with its `job` column (its index in the jobs file; `gpu` is the job's own rank), /links
// one row per link and job that used it, and a Perfetto timeline with one set of processes per job.
#pragma once

#include "sim/engine/run_recorder.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/jobs/jobs_spec.hpp"
#include "trace/trace_buffer.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace memwall::sim::jobs {

struct JobTrace {
  size_t job = 0; // index in spec.jobs
  const RunResult* result = nullptr;
  const RunRecorder* recorder = nullptr;
  const trace::TraceBuffer* trace = nullptr;
};

// The cluster's figures over the jobs' records (result_json), in spec.jobs order of `which`.
nlohmann::json cluster_figures(const JobsSpec& spec, const std::vector<size_t>& which,
                               const std::vector<nlohmann::json>& records);

void export_jobs_trace(const JobsSpec& spec, const std::vector<JobTrace>& jobs, const OutputOptions& output);

} // namespace memwall::sim::jobs
