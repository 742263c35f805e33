// Writes a Chrome trace-event JSON file that Perfetto (ui.perfetto.dev) and chrome://tracing open:
// one track per GPU with its phases, and a "communication" process with one track per sending GPU.
// Only the first `max_gpus` GPUs are written, to keep big runs readable. Written under a temporary
// name and renamed when complete.
#pragma once

#include "trace_rows.hpp"

#include <string>
#include <vector>

namespace memwall::trace {

void write_timeline(const std::string& path, const std::vector<PhaseRow>& phases, const std::vector<CommRow>& comms,
                    long long max_gpus);

} // namespace memwall::trace
