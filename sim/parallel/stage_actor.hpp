// The actors of a run, every layout (see stage_job.hpp for how a TP group maps onto one actor).
//
// StageActor: one TP group of one pipeline stage of one data-parallel replica. Per step it runs its
// stage's order of forwards and backwards (pipeline/schedule.hpp): a forward waits for the previous
// virtual stage's activations, runs the chunk's layers (each followed by its TP collectives) and
// hands its output to the send stream; a backward does the same in reverse with gradients. The LM
// head and loss run on the last virtual stage. After the flush, the stage's gradients are
// all-reduced over its replicas (ring, per TP rank) and the optimizer runs.
//
// SendActor: the group's pipeline send stream (one for activations, one for gradients): transfers
// start as soon as the data exists (asynchronous P2P, as NCCL's send with a posted receive) and
// run beside the compute; the receiver waits only for what has not arrived.
#pragma once

#include "flights.hpp"
#include "stage_job.hpp"

namespace memwall::sim::parallel {

class StageActor {
public:
  StageActor(StageJob& job, long long group) : job_(job), group_(group) {}
  void operator()() const;

private:
  void forward(long long step, const pipeline::PipelineOp& op) const;
  void backward(long long step, const pipeline::PipelineOp& op) const;
  void compute(const PhaseContext& where, const PhaseCost& phase) const;
  // A layer's TP collectives: `all_reduces` all-reduces of the activations (reduce-scatter +
  // all-gather pairs with sequence parallelism: the same bytes), one flow per GPU per ring step.
  void tensor_collectives(const PhaseContext& where, double all_reduces) const;
  // The same in two halves, so that a layer's compute can run in between (tp_overlap): the start posts
  // the flows, the finish waits for them and for the other steps' latencies, recording the wait.
  struct TensorExchange {
    Flights flights;
    double bytes = 0, steps = 0, t_start_s = 0;
  };
  TensorExchange tensor_collectives_start(double all_reduces) const;
  void tensor_collectives_finish(TensorExchange& x, const PhaseContext& where) const;
  void wait_pipeline(Board& board, long long key, const PhaseContext& where) const;
  // Context parallelism (ring attention): a layer's key/value blocks go round the context group while
  // the layer computes: `blocks` blocks of kv_bytes, c - 1 ring steps in one flow per TP rank to the
  // next context rank. The start posts the flows; the finish waits for what the compute did not hide.
  struct ContextExchange {
    Flights flights;
    long long key = -1, next_group = -1;
    double bytes = 0, t_start_s = 0;
  };
  ContextExchange context_exchange_start(double blocks) const;
  void context_exchange_finish(ContextExchange& x, const PhaseContext& where) const;
  // An MoE layer's `count` all-to-alls over the expert-parallel group (dispatch and combine, forward
  // and backward): every TP rank sends 1 / E of its routed tokens to each other member at once.
  void expert_all_to_all(const PhaseContext& where, double count) const;
  // The same in two halves, so that a layer's compute can run in between (moe_a2a_overlap): the start
  // waits for the block at its gate and posts the flows, the finish waits for what the compute did
  // not hide, recording the gate's wait and that.
  struct ExpertExchange {
    Flights flights;
    long long key = -1;
    double count = 0, unit_bytes = 0, t_start_s = 0, t_all_in_s = 0;
  };
  ExpertExchange expert_all_to_all_start(double count) const;
  void expert_all_to_all_finish(ExpertExchange& x, const PhaseContext& where, bool overlapped) const;
  // Waits until every group of this group's expert-parallel block has arrived at gate `key`.
  void expert_gate(long long key) const;
  // A layer's phase on this GPU: an MoE layer's routed-expert share scaled by the load this GPU's
  // experts get (the hot expert on expert-parallel rank 0).
  PhaseCost with_expert_load(const LayerWork& w, const PhaseCost& phase) const;
  // Round `part` (0, 1) of the step's flush sync, one ring per TP rank: over the stage's replicas
  // (HSDP: its shard group) or, `across_replicas`, over HSDP's replica rings (their own board keys).
  void ring_round(long long step, int part, double bytes_per_gpu, trace::TracePhase kind,
                  bool across_replicas = false) const;
  long long virtual_stage(const pipeline::PipelineOp& op) const;
  // With overlap (dp_sync.hpp): whether `op` hands its chunk's buckets over (the chunk's last
  // micro-batch); the buckets complete after the whole backward of `after_layer`, handed to the
  // group's data-parallel stream; one bucket.
  bool hands_over_buckets(const pipeline::PipelineOp& op) const;
  void hand_over_buckets(long long step, const pipeline::PipelineOp& op, long long after_layer) const;
  void hand_over_bucket(long long step, const StageJob::GradientBucket& b) const;
  // A layer's backward GEMM; `handing`: the op whose buckets complete inside it are handed over as
  // their last tensor's gradient is computed (the GEMM split there).
  void backward_gemm(const PhaseContext& where, const PhaseCost& gemm, const pipeline::PipelineOp* handing) const;
  // One layer's forward or backward pass: its GEMM and element-wise phases, with `kv_blocks` of key /
  // value traffic round the context group beside them, then `all_reduces` TP all-reduces (beside the
  // GEMMs with tp_overlap) and, for an MoE layer, as many all-to-alls.
  void layer_pass(const PhaseContext& where, const LayerWork& w, const PhaseCost& gemm, const PhaseCost& elementwise,
                  double kv_blocks, double all_reduces, const pipeline::PipelineOp* handing = nullptr) const;
  // Hands activations (forward) or gradients to virtual stage `to` on the send stream.
  void send_to_virtual_stage(long long step, long long microbatch, long long to, bool forward) const;

  StageJob& job_;
  long long group_;
  mutable long long all_to_alls_ = 0; // the same sequence on every member of an expert-parallel block
  mutable long long context_exchanges_ = 0; // likewise for a context group
  mutable long long tensor_calls_ = 0;      // this group's TP collectives so far (trace ids)
};

class SendActor {
public:
  SendActor(StageJob& job, long long group, bool forward) : job_(job), group_(group), forward_(forward) {}
  void operator()() const;

private:
  StageJob& job_;
  long long group_;
  bool forward_;
};

} // namespace memwall::sim::parallel
