#include "sim/engine/run_recorder.hpp"

#include <algorithm>

namespace memwall::sim {

namespace {

// The simulator's phase kinds are the first trace phases, in the same order.
trace::TracePhase trace_phase(PhaseKind kind) {
  static_assert(static_cast<int>(PhaseKind::FwdGemm) == static_cast<int>(trace::TracePhase::FwdGemm));
  static_assert(static_cast<int>(PhaseKind::Optimizer) == static_cast<int>(trace::TracePhase::Optimizer));
  static_assert(kPhaseKinds == static_cast<int>(trace::TracePhase::Optimizer) + 1);
  return static_cast<trace::TracePhase>(kind);
}

} // namespace

void RunRecorder::record_phase(long long rank, const PhaseContext& where, const PhaseCost& phase, double t_start_s,
                               double t_end_s) {
  GpuTotals& t = totals_[static_cast<size_t>(rank)];
  const double span_s = t_end_s - t_start_s;
  // The SMs' busy power (activity model; 0 in the seed's per-FLOP model) is part of their dynamic energy.
  const double e_arith = phase.flops * gpu_.e_flop_j_per_flop * phase.arith_energy_scale +
                         model::active_power_w(gpu_, phase.clock, gpu_.dvfs.voltage_at(phase.clock)) * span_s;
  const double e_hbm = phase.hbm_bytes * gpu_.e_hbm_j_per_byte;
  t.phase_time_s[static_cast<size_t>(phase.kind)] += t_end_s - t_start_s;
  t.flops += phase.flops;
  t.hbm_bytes += phase.hbm_bytes;
  t.e_arith_j += e_arith;
  t.e_hbm_j += e_hbm;
  t.activities += 1;
  if (span_s > 0)
    t.peak_power_w = std::max(t.peak_power_w, awake_w_ + (e_arith + e_hbm) / span_s);
  if (phase.clock < 1) {
    t.min_clock = std::min(t.min_clock, phase.clock);
    t.throttled_s += span_s;
  }
  t.over_limit_phases += phase.over_limit;
  if (trace_) {
    trace::PhaseRow row{int32_t(rank), int32_t(where.step), int32_t(where.microbatch), int32_t(where.layer),
                        trace_phase(phase.kind), trace::TraceStream::Compute, t_start_s, t_end_s, phase.flops,
                        phase.hbm_bytes, e_arith, e_hbm, awake_w_ * span_s, 0.0};
    row.clock = phase.clock;
    trace_->add_phase(row);
  }
}

void RunRecorder::record_collective(long long rank, long long step, trace::TracePhase kind, bool overlapped,
                                    double t_start_s, double t_end_s, double bytes_sent, double bytes_received,
                                    double network_j, long long activities) {
  GpuTotals& t = totals_[static_cast<size_t>(rank)];
  t.phase_time_s[static_cast<size_t>(PhaseKind::AllReduce)] += t_end_s - t_start_s;
  if (!overlapped)
    t.dp_comm_s += t_end_s - t_start_s;
  t.bytes_sent += bytes_sent;
  t.bytes_received += bytes_received;
  t.e_network_j += network_j;
  t.activities += activities;
  if (trace_)
    trace_->add_phase({int32_t(rank), int32_t(step), -1, -1, kind,
                       overlapped ? trace::TraceStream::Communication : trace::TraceStream::Compute, t_start_s,
                       t_end_s, 0.0, 0.0, 0.0, 0.0, overlapped ? 0.0 : awake_w_ * (t_end_s - t_start_s),
                       network_j});
}

void RunRecorder::record_parallel(long long rank, const PhaseContext& where, trace::TracePhase kind,
                                  double t_start_s, double t_end_s, double bytes_sent, double bytes_received,
                                  double network_j, long long activities) {
  GpuTotals& t = totals_[static_cast<size_t>(rank)];
  const double span_s = t_end_s - t_start_s;
  const bool side_stream = kind == trace::TracePhase::PipelineSend;
  if (kind == trace::TracePhase::TensorComm)
    t.tp_comm_s += span_s;
  else if (kind == trace::TracePhase::ExpertComm)
    t.ep_comm_s += span_s;
  else if (kind == trace::TracePhase::ContextComm)
    t.cp_comm_s += span_s;
  else if (kind == trace::TracePhase::PipelineWait)
    t.pp_wait_s += span_s;
  else if (!side_stream)
    t.dp_comm_s += span_s;
  if (!side_stream) // time on the compute stream: the step's communication share
    t.phase_time_s[static_cast<size_t>(PhaseKind::AllReduce)] += span_s;
  t.bytes_sent += bytes_sent;
  t.bytes_received += bytes_received;
  t.e_network_j += network_j;
  t.activities += activities;
  if (trace_ && (span_s > 0 || bytes_sent > 0))
    trace_->add_phase({int32_t(rank), int32_t(where.step), int32_t(where.microbatch), int32_t(where.layer), kind,
                       side_stream ? trace::TraceStream::Communication : trace::TraceStream::Compute, t_start_s,
                       t_end_s, 0.0, 0.0, 0.0, 0.0, side_stream ? 0.0 : awake_w_ * span_s, network_j});
}

void RunRecorder::record_exposed_wait(long long rank, long long step, trace::TracePhase kind, double t_start_s,
                                      double t_end_s) {
  totals_[static_cast<size_t>(rank)].dp_comm_s += t_end_s - t_start_s;
  if (trace_ && t_end_s > t_start_s)
    trace_->add_phase({int32_t(rank), int32_t(step), -1, -1, kind, trace::TraceStream::Compute, t_start_s, t_end_s,
                       0.0, 0.0, 0.0, 0.0, awake_w_ * (t_end_s - t_start_s), 0.0});
}

void RunRecorder::record_sync_wait(long long rank, trace::TracePhase kind, double seconds) {
  if (seconds <= 0)
    return;
  GpuTotals& t = totals_[static_cast<size_t>(rank)];
  t.sync_wait_s += seconds;
  if (kind == trace::TracePhase::ExpertComm)
    t.ep_comm_s -= seconds;
  else if (kind == trace::TracePhase::ContextComm)
    t.cp_comm_s -= seconds;
  else
    t.dp_comm_s -= seconds;
}

void RunRecorder::split_pipeline_wait(long long rank, double t_start_s, double t_posted_s, double t_end_s) {
  GpuTotals& t = totals_[static_cast<size_t>(rank)];
  const double bubble_s = std::clamp(t_posted_s, t_start_s, t_end_s) - t_start_s;
  t.pp_bubble_s += bubble_s;
  t.pp_transfer_s += (t_end_s - t_start_s) - bubble_s;
}

void RunRecorder::register_link(const std::string& name, const std::string& kind, double bandwidth_bytes_per_s,
                                double j_per_byte) {
  if (trace_)
    links_.try_emplace(name, LinkUsage{kind, bandwidth_bytes_per_s, j_per_byte, 0.0, {}});
}

int64_t RunRecorder::collective_id(trace::TracePhase kind, long long a, long long b, long long c) {
  if (!trace_)
    return 0;
  return collective_ids_.try_emplace({static_cast<long long>(kind), a, b, c}, int64_t(collective_ids_.size()))
      .first->second;
}

void RunRecorder::record_message(const trace::CommRow& message, const std::vector<std::string>& links) {
  if (!trace_)
    return;
  trace_->add_comm(message);
  for (const auto& name : links) {
    LinkUsage& use = links_.at(name);
    use.bytes += message.bytes;
    use.intervals.emplace_back(message.t_start_s, message.t_end_s);
  }
}

void RunRecorder::close_run(double makespan_s, trace::TracePhase tail) {
  if (!trace_)
    return;
  for (size_t rank = 0; rank < totals_.size(); ++rank) {
    const double finish = totals_[rank].finish_time_s;
    if (finish < makespan_s)
      trace_->add_phase({int32_t(rank), -1, -1, -1, tail, trace::TraceStream::Compute, finish, makespan_s, 0.0, 0.0, 0.0, 0.0,
                         awake_w_ * (makespan_s - finish), 0.0});
  }
}

} // namespace memwall::sim
