// Writes a trace as one HDF5 file: root attributes (versions, scenario, fabric, options), /phases,
// /comms, /links (compound datasets with a named phase enum, a unit attribute per column, chunked and
// compressed) and /summary (per-GPU totals, the run's metrics as attributes). The file is written
// under a temporary name and renamed when complete.
#pragma once

#include "trace_rows.hpp"

#include <map>
#include <string>
#include <vector>

namespace memwall::trace {

struct GpuSummaryRow {
  int32_t gpu = 0;
  double t_compute_s = 0, t_allreduce_s = 0, t_optimizer_s = 0, t_wait_s = 0;
  double flops = 0, hbm_bytes = 0, bytes_sent = 0, bytes_received = 0;
  double e_arith_j = 0, e_hbm_j = 0, e_static_j = 0, e_network_j = 0, e_total_j = 0;
  int32_t job = 0;
};

struct TraceContents {
  std::map<std::string, std::string> text_attributes;  // root: versions, scenario YAML, fabric, options
  std::map<std::string, double> summary_numbers;       // /summary attributes (run --json metrics)
  std::map<std::string, std::string> summary_texts;
  const std::vector<PhaseRow>* phases = nullptr;
  const std::vector<CommRow>* comms = nullptr;
  std::vector<LinkRow> links;
  std::vector<PowerRow> power; // the GPUs' power over time
  std::vector<ServerPowerRow> server_power, job_power; // each server's and the whole job's
  std::vector<GpuSummaryRow> per_gpu;
  std::vector<RunEventRow> run_events; // one seed's run with failures (/run), when the scenario has one
  double run_seed = 0;
};

// Throws std::runtime_error on failure, leaving no file at `path`.
void write_hdf5_trace(const std::string& path, const TraceContents& contents);

} // namespace memwall::trace
