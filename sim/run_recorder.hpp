// Accumulates, per GPU, what the simulated activities did: time per phase kind, FLOPs, bytes, joules.
// Summaries only (constant memory per GPU), so 16k-GPU runs stay small.
#pragma once

#include "model/gpu_spec.hpp"
#include "phase_plan.hpp"

#include <array>
#include <vector>

namespace memwall::sim {

struct GpuTotals {
  std::array<double, kPhaseKinds> phase_time_s{};
  double flops = 0;
  double hbm_bytes = 0;
  double e_arith_j = 0;
  double e_hbm_j = 0;
  double e_network_j = 0;
  double bytes_sent = 0;
  double bytes_received = 0;
  double finish_time_s = 0;
  long long activities = 0;
};

class RunRecorder {
public:
  RunRecorder(long long gpus, const model::GpuSpec& gpu) : totals_(static_cast<size_t>(gpus)), gpu_(gpu) {}

  // A compute or memory phase that ran on `rank` from t_start_s to t_end_s.
  void record_phase(long long rank, const PhaseCost& phase, double t_start_s, double t_end_s);
  // A collective's share on `rank`: its duration, bytes it sent and received, network energy, activities.
  void record_collective(long long rank, double t_start_s, double t_end_s, double bytes_sent,
                         double bytes_received, double network_j, long long activities);
  void record_finish(long long rank, double t_s) { totals_[static_cast<size_t>(rank)].finish_time_s = t_s; }

  const std::vector<GpuTotals>& totals() const { return totals_; }

private:
  std::vector<GpuTotals> totals_;
  model::GpuSpec gpu_;
};

} // namespace memwall::sim
