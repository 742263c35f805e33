// Assembles a finished run's trace (rows, link usage, per-GPU and run summaries, provenance) and
// writes the HDF5 trace and the Perfetto timeline that the options ask for.
#pragma once

#include "sim/engine/simulation.hpp"
#include "trace/trace_buffer.hpp"

namespace memwall::sim {

void export_trace(const Scenario& scenario, const RunResult& result, const RunRecorder& recorder,
                  const trace::TraceBuffer& trace, const OutputOptions& output);

} // namespace memwall::sim
