// Collects trace rows during a simulation, aggregated to the requested level:
//   step:       per GPU and step, one `compute` row (all fwd/bwd phases), `allreduce`, `optimizer`;
//   microbatch: per micro-batch one `forward` and one `backward` row, then `allreduce`, `optimizer`;
//   layer:      every simulated phase (four per layer per micro-batch);
//   message:    as layer. /comms holds one row per simulated message at every level but step (a ring
//               phase is one aggregated message per GPU, so messages are few).
// A `wait` row closes each GPU that finished before the slowest one, so that every GPU's rows tile
// [0, makespan] and their static energy adds up to p_static x makespan.
#pragma once

#include "trace_rows.hpp"

#include <vector>

namespace memwall::trace {

class TraceBuffer {
public:
  TraceBuffer(TraceLevel level, long long gpus) : level_(level), open_row_(2 * static_cast<size_t>(gpus), -1) {}

  TraceLevel level() const { return level_; }
  void add_phase(const PhaseRow& row);
  void add_comm(const CommRow& row);
  bool records_comms() const { return level_ != TraceLevel::Step; }

  std::vector<PhaseRow>& phases() { return phases_; }
  const std::vector<PhaseRow>& phases() const { return phases_; }
  const std::vector<CommRow>& comms() const { return comms_; }

private:
  TracePhase aggregate_kind(TracePhase phase) const;
  TraceLevel level_;
  std::vector<long long> open_row_; // per GPU and stream: index of the row that may still grow, or -1
  std::vector<PhaseRow> phases_;
  std::vector<CommRow> comms_;
};

} // namespace memwall::trace
