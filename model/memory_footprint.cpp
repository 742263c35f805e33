#include "memory_footprint.hpp"

#include "architecture_cost.hpp"

#include <algorithm>
#include <cstdio>

namespace memwall::model {

namespace {

MemoryFootprint footprint_of(double params, double activation_bytes, const GpuSpec& gpu, const TrainingPlan& plan,
                             long long gpus) {
  const double n = double(gpus);
  MemoryFootprint f;
  const bool shard_optimizer = plan.sharding != Sharding::None;
  // BF16 weights; FP8 adds the FP8 weight and its transpose (or replaces the BF16 copy: fp8_params).
  f.weight_bytes = plan.weight_bytes() * params / (plan.sharding == Sharding::Zero3 ? n : 1.0);
  f.gradient_bytes =
      plan.gradient_bytes * params / (plan.sharding == Sharding::Zero2 || plan.sharding == Sharding::Zero3 ? n : 1.0);
  f.optimizer_bytes = plan.optimizer_state_bytes() * params / (shard_optimizer ? n : 1.0); // master + m + v
  f.activation_bytes = activation_bytes;
  f.total_bytes = f.weight_bytes + f.gradient_bytes + f.optimizer_bytes + f.activation_bytes;
  f.capacity_bytes = gpu.hbm_capacity_bytes;
  return f;
}

// The loss's float32 softmax of one micro-batch's logits, a TP rank's vocabulary share.
double loss_bytes(const ArchitectureSpec& arch, double tokens, double t) {
  return arch.lm_head ? kLossBytesPerLogit * tokens * double(arch.vocab) / t : 0.0;
}

} // namespace

MemoryFootprint memory_footprint(const TransformerShape& shape, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic, const TrainingPlan& plan, long long gpus) {
  const double recomputed = double(recomputed_layers(plan, shape.layers));
  const double per_token = 2.0 * recomputed + traffic.a_store_bytes_per_token_per_d * (double(shape.layers) - recomputed);
  return footprint_of(total_params(shape), per_token * double(shape.hidden) * tokens_per_microbatch, gpu, plan, gpus);
}

MemoryFootprint memory_footprint(const ArchitectureSpec& arch, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic, const TrainingPlan& plan, long long gpus) {
  if (is_seed_shaped(arch))
    return memory_footprint(TransformerShape{arch.hidden, arch.layers, arch.seq_len, arch.vocab},
                            tokens_per_microbatch, gpu, traffic, plan, gpus);
  // `none` and `selective` store the same: a fused attention kernel keeps no s x s tensors either way.
  double stored = 0, working_set = 0;
  for (long long l = 0; l < model_layers(arch); ++l) {
    stored += activation_bytes_per_layer(arch, l, tokens_per_microbatch,
                                         layer_recomputed(plan, l) ? Recompute::Full : Recompute::Selective,
                                         plan.fp8, plan.recompute_modules);
    if (layer_recomputed(plan, l))
      working_set = std::max(working_set, activation_bytes_per_layer(arch, l, tokens_per_microbatch,
                                                                     Recompute::Selective, plan.fp8));
  }
  return footprint_of(count_params(arch).trained,
                      stored + working_set + loss_bytes(arch, tokens_per_microbatch, 1.0), gpu, plan, gpus);
}

MemoryFootprint stage_footprint(const ArchitectureSpec& arch, const ParallelLayout& layout, long long stage,
                                long long in_flight, double tokens_per_microbatch, const GpuSpec& gpu,
                                const TrafficConstants& traffic, const TrainingPlan& plan) {
  const bool seed = is_seed_shaped(arch);
  const ParamCounts counts = seed ? ParamCounts{} : count_params(arch);
  const double t = double(layout.tensor), d = double(arch.hidden);
  const bool sp = layout.sequence_parallel;
  double params = 0, activations = 0, working_set = 0; // working_set: a recomputed layer's, per token
  double replicated = 0; // of params: held whole by every TP rank (ParamCounts::tp_replicated)
  double expert_params = 0; // the routed experts this GPU holds (in `params` too)
  bool mtp_embedding_counted = false;
  // An untied LM head's weights: on the last stage, not part of the embedding copies.
  const double head = seed || !arch.lm_head || arch.tied_embeddings ? 0.0 : double(arch.vocab) * d;
  for (long long chunk = 0; chunk < layout.virtual_stages; ++chunk) {
    const LayerRange range = chunk_layers(layout, stage, chunk);
    for (long long l = range.first; l < range.last; ++l) {
      double ffn = seed ? 0.0 : (is_moe_layer(arch, l) ? counts.moe_ffn : counts.dense_ffn);
      if (!seed && is_moe_layer(arch, l)) { // EP holds experts / E of the routed experts
        const double router = d * double(arch.moe.experts);
        const double per_expert = (counts.moe_ffn - router) / double(arch.moe.experts + arch.moe.shared_experts);
        ffn -= per_expert * double(arch.moe.experts) * (1.0 - 1.0 / double(layout.expert));
        expert_params += per_expert * double(arch.moe.experts) / double(layout.expert);
      }
      params += seed ? params_per_layer(arch.hidden) : counts.attention + counts.norms_per_layer + ffn;
      replicated += seed ? 0.0 : counts.tp_replicated;
      if (!seed && is_mtp_layer(arch, l)) { // its projection and norms, and (past stage 0) a copy of the
        // embedding it reads its tokens through (Megatron-Core builds one where the MTP block runs)
        params += counts.mtp_projection;
        if (stage != 0 && !mtp_embedding_counted) {
          params += counts.embedding - head;
          mtp_embedding_counted = true;
        }
      }
      // Bytes per token stored by the whole layer, then this GPU's share of them.
      const bool full = layer_recomputed(plan, l);
      const double whole = full ? 2.0 * d
                           : seed ? traffic.a_store_bytes_per_token_per_d * d
                                  : activation_bytes_per_layer(arch, l, 1.0, Recompute::Selective, plan.fp8,
                                                                               plan.recompute_modules);
      const double replicated = sp ? 0.0 : (full ? whole : std::min(whole, 10.0 * d));
      activations += replicated + (whole - replicated) / t;
      if (full && !seed) { // its forward's activations again, during its backward
        const double again = activation_bytes_per_layer(arch, l, 1.0, Recompute::Selective, plan.fp8);
        const double again_replicated = sp ? 0.0 : std::min(again, 10.0 * d);
        working_set = std::max(working_set, again_replicated + (again - again_replicated) / t);
      }
    }
  }
  // A chunk's layers for each (micro-batch, chunk) in flight: the stage's layers / v on average.
  activations *= tokens_per_microbatch * double(in_flight) / double(layout.virtual_stages);
  activations += working_set * tokens_per_microbatch;
  if (!seed && stage == layout.pipeline - 1)
    activations += loss_bytes(arch, tokens_per_microbatch, t);
  if (stage == 0)
    params += (seed ? embedding_params(TransformerShape{arch.hidden, arch.layers, arch.seq_len, arch.vocab})
                    : counts.embedding - head);
  if (stage == layout.pipeline - 1)
    params += head;
  // ZeRO-1 over the replicas: the distributed optimizer. FSDP (zero2 / zero3) with a pipeline holds
  // the same during the step: PyTorch's pipelining keeps the stage's parameters gathered and its
  // gradients unreduced over the micro-batches (see sim/parallel/stage_actor.cpp); only the
  // optimizer state (fp32 parameters, m, v) stays sharded. Without a pipeline zero2 / zero3 shard
  // as in pure data parallelism (sim/parallel/dp_sync.hpp; the gathered units are not counted).
  TrainingPlan sharded = plan;
  if (sharded.sharding != Sharding::None && layout.pipeline > 1)
    sharded.sharding = Sharding::Zero1;
  // Megatron-Core's distributed optimizer shards a dense parameter's state over the data-parallel
  // group with context parallelism (DP x CP ranks hold the same weights: dp_cp_group), a routed
  // expert's over the expert-data-parallel group (the DP x CP / EP ranks holding that expert:
  // expt_dp_group) (megatron/core/optimizer/__init__.py: dense and expert parameter groups each
  // get their own distributed optimizer over those groups).
  // HSDP shards weights, gradients and optimizer state over its shard group only (each shard group
  // holds a whole copy: PyTorch's HYBRID_SHARD).
  const long long dense_replicas = plan.shard_degree(layout.data, layout.context);
  // A routed expert is split expert_tensor_parallel ways (the tensor degree unless folded over TP), and
  // its expert-data-parallel group is TP x DP x CP / (EP x ETP) ranks.
  const double etp = double(layout.expert_tensor_degree());
  const long long expert_replicas =
      std::max(1LL, layout.tensor * dense_replicas / std::max(1LL, layout.expert * layout.expert_tensor_degree()));
  MemoryFootprint f =
      footprint_of((params - expert_params - replicated) / t + replicated, activations, gpu, sharded, dense_replicas);
  const MemoryFootprint experts = footprint_of(expert_params / etp, 0.0, gpu, sharded, expert_replicas);
  f.weight_bytes += experts.weight_bytes;
  f.gradient_bytes += experts.gradient_bytes;
  f.optimizer_bytes += experts.optimizer_bytes;
  f.total_bytes += experts.total_bytes;
  return f;
}

double runtime_reserve_bytes(long long communicators) {
  return kCudaContextBytes + kNcclBytesPerCommunicator * double(std::max(0LL, communicators));
}

MemoryFootprint with_runtime_reserve(MemoryFootprint f, long long communicators) {
  f.reserved_bytes = runtime_reserve_bytes(communicators);
  f.total_bytes += f.reserved_bytes;
  return f;
}

std::string MemoryFootprint::describe() const {
  char text[320];
  std::snprintf(text, sizeof text,
                "%.1f GB per GPU (weights %.1f, gradients %.1f, optimizer state %.1f, activations %.1f, CUDA context "
                "and NCCL %.1f GB) %s %.1f GB of HBM",
                total_bytes / 1e9, weight_bytes / 1e9, gradient_bytes / 1e9, optimizer_bytes / 1e9,
                activation_bytes / 1e9, reserved_bytes / 1e9, fits() ? "<=" : ">", capacity_bytes / 1e9);
  return text;
}

} // namespace memwall::model
