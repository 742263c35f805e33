#include "run_recorder.hpp"

namespace memwall::sim {

void RunRecorder::record_phase(long long rank, const PhaseCost& phase, double t_start_s, double t_end_s) {
  GpuTotals& t = totals_[static_cast<size_t>(rank)];
  t.phase_time_s[static_cast<size_t>(phase.kind)] += t_end_s - t_start_s;
  t.flops += phase.flops;
  t.hbm_bytes += phase.hbm_bytes;
  t.e_arith_j += phase.flops * gpu_.e_flop_j_per_flop;
  t.e_hbm_j += phase.hbm_bytes * gpu_.e_hbm_j_per_byte;
  t.activities += 1;
}

void RunRecorder::record_collective(long long rank, double t_start_s, double t_end_s, double bytes_sent,
                                    double bytes_received, double network_j, long long activities) {
  GpuTotals& t = totals_[static_cast<size_t>(rank)];
  t.phase_time_s[static_cast<size_t>(PhaseKind::AllReduce)] += t_end_s - t_start_s;
  t.bytes_sent += bytes_sent;
  t.bytes_received += bytes_received;
  t.e_network_j += network_j;
  t.activities += activities;
}

} // namespace memwall::sim
