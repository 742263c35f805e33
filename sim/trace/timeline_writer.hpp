// Writes a Chrome trace-event JSON file that Perfetto (ui.perfetto.dev) and chrome://tracing open:
// one track per GPU with its phases, and a "communication" process with one track per sending GPU.
// Only the first `max_gpus` GPUs are written, to keep big runs readable. Written under a temporary
// name and renamed when complete.
#pragma once

#include "trace_rows.hpp"

#include <string>
#include <vector>

namespace memwall::trace {

// `job_names`: several jobs' rows (their `job` column), each job's four processes (GPUs,
// communication, overlapped collectives, power) named after it, the first `max_gpus` GPUs of each.
void write_timeline(const std::string& path, const std::vector<PhaseRow>& phases, const std::vector<CommRow>& comms,
                    long long max_gpus, const std::vector<std::string>& job_names = {});

} // namespace memwall::trace
