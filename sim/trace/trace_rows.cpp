#include "trace_rows.hpp"

#include <stdexcept>

namespace memwall::trace {

const char* trace_phase_name(TracePhase phase) {
  static const char* const names[kTracePhases] = {"fwd_gemm",  "fwd_elementwise", "bwd_gemm", "bwd_elementwise",
                                                  "allreduce", "optimizer",       "forward",  "backward",
                                                  "compute",   "wait",            "allgather", "reducescatter",
                                                  "tp_comm",   "pp_wait",         "pp_send",   "ep_comm",
                                                  "cp_comm"};
  return names[static_cast<int>(phase)];
}

TraceLevel parse_trace_level(const std::string& text) {
  if (text == "step")
    return TraceLevel::Step;
  if (text == "microbatch")
    return TraceLevel::Microbatch;
  if (text == "layer")
    return TraceLevel::Layer;
  if (text == "message")
    return TraceLevel::Message;
  throw std::invalid_argument("unknown trace level '" + text + "' (step, microbatch, layer, message)");
}

const char* trace_level_name(TraceLevel level) {
  switch (level) {
  case TraceLevel::Step:
    return "step";
  case TraceLevel::Microbatch:
    return "microbatch";
  case TraceLevel::Layer:
    return "layer";
  case TraceLevel::Message:
    return "message";
  }
  return "?";
}

std::vector<PowerRow> power_rows(const std::vector<PhaseRow>& phases) {
  std::vector<PowerRow> rows;
  for (const auto& p : phases) {
    const double span_s = p.t_end_s - p.t_start_s;
    if (p.stream != TraceStream::Compute || span_s <= 0)
      continue;
    rows.push_back({p.gpu, p.t_start_s, p.t_end_s, (p.e_arith_j + p.e_hbm_j + p.e_static_j) / span_s, p.clock});
  }
  return rows;
}

} // namespace memwall::trace
