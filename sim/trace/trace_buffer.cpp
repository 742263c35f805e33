#include "trace_buffer.hpp"

#include <algorithm>

namespace memwall::trace {

TracePhase TraceBuffer::aggregate_kind(TracePhase phase) const {
  const bool compute = phase == TracePhase::FwdGemm || phase == TracePhase::FwdElementwise ||
                       phase == TracePhase::BwdGemm || phase == TracePhase::BwdElementwise;
  if (!compute || level_ == TraceLevel::Layer || level_ == TraceLevel::Message)
    return phase;
  if (level_ == TraceLevel::Step)
    return TracePhase::Compute;
  return phase == TracePhase::FwdGemm || phase == TracePhase::FwdElementwise ? TracePhase::Forward
                                                                              : TracePhase::Backward;
}

void TraceBuffer::add_phase(const PhaseRow& row) {
  PhaseRow r = row;
  r.phase = aggregate_kind(row.phase);
  if (r.phase != row.phase) { // aggregated: no single layer, and no micro-batch at step level
    r.layer = -1;
    if (level_ == TraceLevel::Step)
      r.microbatch = -1;
  }
  long long& open = open_row_[2 * static_cast<size_t>(r.gpu) + static_cast<size_t>(r.stream)];
  if (open >= 0) {
    PhaseRow& last = phases_[static_cast<size_t>(open)];
    if (last.phase == r.phase && r.phase != row.phase && last.step == r.step && last.microbatch == r.microbatch) {
      last.t_end_s = r.t_end_s;
      last.flops += r.flops;
      last.hbm_bytes += r.hbm_bytes;
      last.e_arith_j += r.e_arith_j;
      last.e_hbm_j += r.e_hbm_j;
      last.e_static_j += r.e_static_j;
      last.e_network_j += r.e_network_j;
      last.clock = std::min(last.clock, r.clock);
      return;
    }
  }
  phases_.push_back(r);
  open = static_cast<long long>(phases_.size()) - 1;
}

void TraceBuffer::add_comm(const CommRow& row) {
  if (records_comms())
    comms_.push_back(row);
}

} // namespace memwall::trace
