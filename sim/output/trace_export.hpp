// Assembles a finished run's trace (rows, link usage, per-GPU and run summaries, provenance) and
// writes the HDF5 trace and the Perfetto timeline that the options ask for.
#pragma once

#include "sim/engine/simulation.hpp"
#include "trace/hdf5_trace_writer.hpp"
#include "trace/trace_buffer.hpp"

namespace memwall::sim {

void export_trace(const Scenario& scenario, const RunResult& result, const RunRecorder& recorder,
                  const trace::TraceBuffer& trace, const OutputOptions& output);

// What export_trace writes to the HDF5 file, assembled and not written: `phases` and `comms` point
// into `trace`. Several jobs' traces merge these (sim/jobs/jobs_trace.hpp).
trace::TraceContents trace_contents(const Scenario& scenario, const RunResult& result, const RunRecorder& recorder,
                                    const trace::TraceBuffer& trace, const OutputOptions& output);

} // namespace memwall::sim
