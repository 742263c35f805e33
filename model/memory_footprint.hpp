// Per-GPU memory footprint of a data-parallel job with mixed-precision Adam (by default 16 B/param:
// bf16 weights 2, bf16 gradients 2, fp32 master 4, m 4, v 4; TrainingPlan's dtypes change each), by
// sharding mode, plus the saved activations of the micro-batch in flight (a_store d T L bytes; 2 d T L,
// one bf16 input per layer, with recompute).
//   none:  2P + 2P + 12P          zero1: 2P + 2P + 12P/N
//   zero2: 2P + (2 + 12)P/N       zero3: 16P/N
#pragma once

#include "architecture.hpp"
#include "gpu_spec.hpp"
#include "parallel_layout.hpp"
#include "traffic.hpp"
#include "training_plan.hpp"
#include "transformer.hpp"

#include <string>

namespace memwall::model {

struct MemoryFootprint {
  double weight_bytes = 0;     // weights held by a GPU (bf16; FP8 copies with precision fp8)
  double gradient_bytes = 0;   // gradients held by a GPU (bf16, or fp32 with grad_reduce_in_fp32)
  double optimizer_bytes = 0;  // master copy, m, v held by a GPU (fp32 unless optimizer_dtypes)
  double activation_bytes = 0; // saved for backward
  double reserved_bytes = 0;   // the CUDA context and NCCL's buffers: no tensor can use them
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits() const { return total_bytes <= capacity_bytes; }
  std::string describe() const; // "119.3 GB per GPU (weights 13.7, ..., CUDA context and NCCL 0.5 GB) > 85.1 GB of HBM"
};

// What a training process holds besides its tensors: the CUDA context, 0.5 GB (PyTorch issues #28113,
// "200+mb to 700+mb ... the size of the CUDA context", and #107667, about 300 MB with lazy loading),
// and NCCL's buffers, 0.688 GB per communicator (NVIDIA/nccl #964, 4 x A100: 544 MB for a group of
// two, 688 MB for larger ones; NCCL_BUFFSIZE, 4 MiB per channel and peer, is most of it).
// `communicators`: the process groups a GPU's collectives run in (tensor, data x context, context,
// pipeline, expert), NCCL creating each on first use.
// Two peaks beside the saved activations (not for the seed's layer, whose model has neither):
// - The loss: the last stage holds one micro-batch's logits as the cross entropy's float32 softmax,
//   4 bytes a logit over the vocabulary / t (Megatron-Core's vocab_parallel_cross_entropy saves
//   exp_logits in float32 for its backward; torch's cross_entropy on .float() logits its log-softmax).
// - Full recompute: while a recomputed layer's backward runs, its forward's activations exist again,
//   one layer and one micro-batch of them.
constexpr double kLossBytesPerLogit = 4;
constexpr double kCudaContextBytes = 0.5e9;
constexpr double kNcclBytesPerCommunicator = 0.688e9;
double runtime_reserve_bytes(long long communicators);
// `f` with that reserve counted in its total.
MemoryFootprint with_runtime_reserve(MemoryFootprint f, long long communicators);

MemoryFootprint memory_footprint(const TransformerShape& shape, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic, const TrainingPlan& plan = {}, long long gpus = 1);

// Any architecture: its parameter count, and the activations it stores (Korthikanti's accounting,
// attention as a fused kernel that stores no s x s tensors, i.e. the selective figure, or the layer
// inputs with recompute). A seed-shaped architecture gives the function above exactly.
MemoryFootprint memory_footprint(const ArchitectureSpec& arch, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic, const TrainingPlan& plan = {}, long long gpus = 1);

// One GPU of pipeline stage `stage` under tensor and pipeline parallelism: the stage's parameters / t
// (its layers; the embeddings on the first stage, an untied LM head on the last), optimizer state
// sharded with zero1 as Megatron-Core's distributed optimizer shards it (dense parameters over DP x CP,
// routed experts over DP x CP / EP); activations per Korthikanti et al. 2022 with
// TP (Table 2: 10 of the 34 bytes per token and d stay whole on every GPU of the group without
// sequence parallelism, all divide by t with it; a fully recomputed layer keeps its input, divided by
// t only with sequence parallelism), for the `in_flight` (micro-batch, chunk) pairs the stage's
// schedule holds at its peak, each a chunk's worth (stage layers / v) of layers.
MemoryFootprint stage_footprint(const ArchitectureSpec& arch, const ParallelLayout& layout, long long stage,
                                long long in_flight, double tokens_per_microbatch, const GpuSpec& gpu,
                                const TrafficConstants& traffic, const TrainingPlan& plan);

} // namespace memwall::model
