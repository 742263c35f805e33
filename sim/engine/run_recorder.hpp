// Accumulates what the simulated activities did. Always: per-GPU totals (time per phase kind, FLOPs,
// bytes, joules), constant memory per GPU so 16k-GPU runs stay small. With a TraceBuffer: trace rows
// (phases, messages) and per-link usage as well.
#pragma once

#include "model/gpu_spec.hpp"
#include "sim/engine/phase_plan.hpp"
#include "trace/trace_buffer.hpp"

#include <array>
#include <map>
#include <string>
#include <unordered_map>
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
  // Model parallelism: tensor-parallel collectives (critical path), waits for a neighbouring
  // pipeline stage (the bubble, and any transfer not hidden), data-parallel gradient sync.
  double tp_comm_s = 0;
  double ep_comm_s = 0;
  double cp_comm_s = 0;
  double pp_wait_s = 0;
  double pp_bubble_s = 0;   // pp_wait_s before the neighbour had the data (the bubble)
  double pp_transfer_s = 0; // pp_wait_s after it had (the transfer not hidden)
  // Data-parallel sync on the compute stream: a grouped layout's rings; in pure data parallelism the
  // chosen collective run on the compute stream, and waits for overlapped ones (exposed).
  double dp_comm_s = 0;
  // Time inside a collective before its last member arrived (taken out of that kind's time above).
  double sync_wait_s = 0;
  // Power: the highest of its phases' (static included), and the time spent below full clock.
  double peak_power_w = 0;
  double min_clock = 1;
  double throttled_s = 0;
  long long over_limit_phases = 0; // phases above the power limit even at the lowest clock
  bool finished = false; // the GPU's actor ran to its end (false after a deadlock)
  long long activities = 0;

  double time_s(PhaseKind kind) const { return phase_time_s[static_cast<size_t>(kind)]; }
  // Forward and backward phases of all micro-batches.
  double compute_time_s() const {
    return time_s(PhaseKind::FwdGemm) + time_s(PhaseKind::FwdElementwise) + time_s(PhaseKind::BwdGemm) +
           time_s(PhaseKind::BwdElementwise);
  }
};

// Where a phase sits in the run.
struct PhaseContext {
  long long step = 0;
  long long microbatch = -1;
  long long layer = -1;
};

struct LinkUsage {
  std::string kind;
  double bandwidth_bytes_per_s = 0;
  double j_per_byte = 0;
  double bytes = 0;
  std::vector<std::pair<double, double>> intervals;
};

class RunRecorder {
public:
  RunRecorder(long long gpus, const model::GpuSpec& gpu, trace::TraceBuffer* trace = nullptr)
      : totals_(static_cast<size_t>(gpus)), gpu_(gpu), awake_w_(model::awake_power_w(gpu)), trace_(trace) {}

  // A compute or memory phase that ran on `rank` from t_start_s to t_end_s.
  void record_phase(long long rank, const PhaseContext& where, const PhaseCost& phase, double t_start_s,
                    double t_end_s);
  // A collective's share on `rank`: its kind, duration, bytes it sent and received, network energy,
  // activities. `overlapped`: it ran on the communication stream beside the compute (its static
  // energy is the compute stream's).
  void record_collective(long long rank, long long step, trace::TracePhase kind, bool overlapped, double t_start_s,
                         double t_end_s, double bytes_sent, double bytes_received, double network_j,
                         long long activities);
  // The compute stream waited for an overlapped collective of `kind` (exposed communication).
  void record_exposed_wait(long long rank, long long step, trace::TracePhase kind, double t_start_s, double t_end_s);
  // Model-parallel communication on `rank`: a layer's TP collectives, a wait for a pipeline
  // neighbour, a pipeline send (communication stream) or a data-parallel sync (kind AllReduce,
  // ReduceScatter or AllGather), with the bytes it sent and received and its network energy.
  void record_parallel(long long rank, const PhaseContext& where, trace::TracePhase kind, double t_start_s,
                       double t_end_s, double bytes_sent, double bytes_received, double network_j,
                       long long activities);
  // Of the time just recorded for a collective of `kind`, `seconds` went waiting for the group's last
  // member: moved from the kind's share to sync_wait_s (the breakdown's wait_s).
  void record_sync_wait(long long rank, trace::TracePhase kind, double seconds);
  // A pipeline wait from t_start_s to t_end_s for data its sender had from t_posted_s: the bubble
  // until then, the transfer after (recorded with record_parallel, kind PipelineWait, as well).
  void split_pipeline_wait(long long rank, double t_start_s, double t_posted_s, double t_end_s);
  // The trace's id of one collective call, the same for all its messages: calls are told apart by
  // `key` (the kind, then what identifies the call in its engine); ids count from 0 in order of first
  // use. 0 without a trace.
  int64_t collective_id(trace::TracePhase kind, long long a, long long b = 0, long long c = 0);
  // One simulated message and the links it crossed (traces only).
  void record_message(const trace::CommRow& message, const std::vector<std::string>& links);
  void register_link(const std::string& name, const std::string& kind, double bandwidth_bytes_per_s,
                     double j_per_byte);
  void record_finish(long long rank, double t_s) {
    totals_[static_cast<size_t>(rank)].finish_time_s = t_s;
    totals_[static_cast<size_t>(rank)].finished = true;
  }
  // Adds the rows (kind `tail`) of GPUs that finished before `makespan_s` (traces only).
  void close_run(double makespan_s, trace::TracePhase tail = trace::TracePhase::Wait);

  bool tracing() const { return trace_ != nullptr; }
  const std::vector<GpuTotals>& totals() const { return totals_; }
  const std::unordered_map<std::string, LinkUsage>& links() const { return links_; }

private:
  std::vector<GpuTotals> totals_;
  model::GpuSpec gpu_;
  double awake_w_; // static (+ clocked wait in the activity model): every compute-stream second draws it
  trace::TraceBuffer* trace_;
  std::unordered_map<std::string, LinkUsage> links_;
  std::map<std::array<long long, 4>, int64_t> collective_ids_;
};

} // namespace memwall::sim
