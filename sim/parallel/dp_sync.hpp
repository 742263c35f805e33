// The data-parallel gradient synchronisation of a run: each stage's gradients over its
// replicas (data x context ranks), one ring per TP rank, and a routed expert's over the GPUs that hold
// the same experts (stage_job.hpp); in pure data parallelism the collective the scenario chose.
//
// Without overlap the StageActor runs it after the pipeline flush (Megatron-LM 2021). With
// `training.overlap: bucketed` it runs as Megatron-Core's DDP with overlap_grad_reduce does: a chunk's
// gradients fill buckets in the order its last micro-batch's backward produces them (an untied LM
// head's first, then layer by layer, the embeddings last); a bucket goes to the group's data-parallel
// stream (a DpStreamActor) as soon as it is full, and runs there beside the backward, the pipeline's
// drain and the other chunks. After the flush the compute stream waits for the stream's last bucket:
// only that wait is exposed (dp_s). Buckets close at layer boundaries (a layer's gradients all exist
// when its backward ends); sharding zero1 reduce-scatters each bucket (the distributed optimizer), then
// all-gathers the updated parameters beside the next forward (overlap_param_gather, below).
#pragma once

#include "stage_job.hpp"

#include <vector>

namespace memwall::sim::parallel {

// One ring round of group `group`'s data-parallel rings: `bytes_per_gpu` of dense gradients over the
// replicas (HSDP: over the shard group, or with `across_replicas` over the replica ring, without
// experts) and `expert_bytes_per_gpu` over the expert-data-parallel ring, the ring's d - 1 steps in one
// flow per destination, the other steps' latencies after it. `key` tells rounds apart on the boards
// (the same on every replica). Returns when this group's share is done.
struct RingRound {
  bool ran = false;
  double t_start_s = 0, t_all_in_s = 0, t_end_s = 0;
  double bytes = 0, expert_bytes = 0; // per GPU, sent and received
  std::vector<double> joules;         // per member
};
// Pure data parallelism (StageJob::data_collective): runs `bytes_per_gpu` of the chosen collective for
// group `group`'s GPU, recorded as `kind` (an all-reduce, or its reduce-scatter or all-gather half);
// `sequence` tells its messages apart from the step's other collectives (a board key). Returns false,
// doing nothing, where the job runs rings instead.
bool run_data_collective(StageJob& job, long long group, long long step, trace::TracePhase kind,
                         double bytes_per_gpu, long long sequence, bool overlapped);

RingRound run_ring_round(StageJob& job, long long group, long long key, double bytes_per_gpu,
                         double expert_bytes_per_gpu, bool across_replicas = false);

// Every flow of a ring round as a trace message (traces only); the flows of round `key` of a stage's
// ring share one collective id per sending member.
void trace_ring_round(StageJob& job, long long group, const RingRound& r, trace::TracePhase kind, long long key,
                      bool across_replicas = false);

// A GPU's share of layer `layer`'s parameters and, of them, its routed experts (1 / EP of them, split
// t ways as the work is or whole where experts fold over TP); experts 0 without expert parallelism.
struct GpuLayerParams {
  double params = 0, experts = 0;
};
GpuLayerParams gpu_layer_params(const StepWork& work, const model::ParallelLayout& l, long long layer);

// The buckets of every stage's chunks (stage_job.hpp, GradientBucket), from the work's per-layer
// parameters as stage_setup counts them; their bytes add up to the stage's.
void plan_gradient_buckets(StageJob& job, double bytes_per_param);

// The board key of bucket `index` of `step`, ring round `part` (0, 1): apart from the flush's rounds.
long long bucket_round_key(long long step, long long index, int part);
// Bucket indices apart from the reduce-scatters' (a step's count of requests, far below): HSDP's
// replica all-reduces after them.
inline constexpr long long kReplicaBucketIndex = 6000000;

// Hands `request` to group `group`'s data-parallel stream; one without its own semaphore is counted
// in the step's requests that wait_for_stream waits for.
StageJob::Pending hand_over(StageJob& job, long long group, StageJob::DpRequest request);
// Waits for every counted request of the step (the exposed part, recorded as `kind`).
void wait_for_stream(StageJob& job, long long group, long long step, trace::TracePhase kind);

// The distributed optimizer's all-gather of the updated parameters (zero1 with overlap: bucketed),
// as Megatron-Core's overlap_param_gather runs it: beside the next step's forward, bucket by bucket,
// each layer's first forward waiting only for the bucket that holds it. Steady state: the gathers
// posted at a step's start are the previous step's update's, so a step still moves one
// reduce-scatter and one all-gather of its gradients' bytes. post_param_gathers hands every bucket
// of every chunk to the stream in forward order (chunk 0 first; in a chunk, the lowest layers' and
// the embeddings' bucket first); wait_param_gathers waits, before a chunk's first micro-batch runs
// `layer` (LLONG_MAX: the LM head), for those of its buckets that start at or below it.
void post_param_gathers(StageJob& job, long long group, long long step);
void wait_param_gathers(StageJob& job, long long group, long long step, long long chunk, long long layer);

// FSDP without a pipeline (sharding zero3, pipeline 1), as PyTorch's FSDP and the data-parallel
// engine run it. Each layer is a unit (layer 0's with the embeddings and the LM head). With
// overlap: bucketed, the stream gathers a unit one layer ahead of the compute (forward, then the
// backward's, which the forward's last layer prefetches), and reduce-scatters a layer's gradients
// right after its backward, every micro-batch; the step waits for the last reduce-scatter after
// the flush. Without overlap, the whole model is gathered before each pass and its gradients are
// reduce-scattered once after the flush, on the compute stream. The optimizer then updates the
// shards; nothing is gathered after it. HSDP (training.shard_group, PyTorch's HYBRID_SHARD): the
// gathers and reduce-scatters run inside the shard group, and each reduce-scatter is followed by
// the shard's all-reduce across the replica groups (on the stream with overlap, else on the
// compute stream). No-ops unless job.fsdp().
void fsdp_before_pass(StageJob& job, long long group, long long step, long long mb, bool forward);
void fsdp_before_layer(StageJob& job, long long group, long long step, long long mb, bool forward, long long layer);
void fsdp_after_backward(StageJob& job, long long group, long long step, long long mb, long long layer);
void fsdp_reduce_after_flush(StageJob& job, long long group, long long step);

// A group's data-parallel stream: runs the buckets handed to it, one after the other.
class DpStreamActor {
public:
  DpStreamActor(StageJob& job, long long group) : job_(job), group_(group) {}
  void operator()() const;

private:
  StageJob& job_;
  long long group_;
};

} // namespace memwall::sim::parallel
