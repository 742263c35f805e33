// How the data-parallel job trains: optimizer-state sharding (ZeRO stages), activation recompute,
// communication overlap. The defaults are the seed's model: the optimizer state is sharded over the
// N GPUs (ZeRO-1: the optimizer touches b_opt P / N bytes per GPU), nothing recomputed or overlapped.
#pragma once

#include <string>

namespace memwall::model {

enum class Sharding { None, Zero1, Zero2, Zero3 };
const char* sharding_name(Sharding s);
bool parse_sharding(const std::string& text, Sharding* out); // none | zero1 | zero2 | zero3

// Megatron-Core's selective recompute modules (megatron/core/transformer/transformer_config.py,
// recompute_modules with recompute_granularity "selective"): what a layer frees after its forward and
// runs again in its backward. Flags; the default list is core_attn alone, as Megatron-Core's.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1,      // the attention core (QK^T, softmax, A V)
  kRecomputeLayernorm = 2,     // the two norms: their outputs, the next linear layers' inputs
  kRecomputeMlaUpProj = 4,     // MLA's up-projections: Q, K and V from the latents
  kRecomputeMoeAct = 8,        // the routed experts' activation function: their second GEMM's input
  kRecomputeMlp = 16,          // a dense layer's whole MLP
  kRecomputeSharedExperts = 32 // an MoE layer's shared experts
};
const char* recompute_module_name(unsigned module);
bool parse_recompute_module(const std::string& text, unsigned* out); // one of the names above
std::string recompute_module_names(unsigned modules);                // "core_attn, layernorm"

struct TrainingPlan;
// Whether layer l keeps only its input and recomputes its forward (full recompute, every k-th layer).
bool layer_recomputed(const TrainingPlan& plan, long long layer);
// How many of `layers` layers do.
long long recomputed_layers(const TrainingPlan& plan, long long layers);

struct TrainingPlan {
  Sharding sharding = Sharding::Zero1;
  bool activation_recompute = false; // full: keep only each layer's input, recompute the forward in backward
  long long recompute_every = 1;     // with full recompute: only layers l with l % every == 0 (torchtitan's
                                     // "selective layer" checkpointing with ac_freq = every)
  bool selective_recompute = false;  // Korthikanti et al.: recompute the attention core in backward
  unsigned recompute_modules = kRecomputeCoreAttn; // with selective recompute: what runs again
  // FP8 training as Transformer Engine does it: the linear layers' GEMMs at the FP8 tensor rate;
  // attention, element-wise work, master weights, gradients and optimizer state as in BF16; each
  // weight also kept as FP8 and as its FP8 transpose (+2 bytes per parameter, sharded as weights).
  bool fp8 = false;
  // Bytes per parameter of what training keeps beside the BF16 weights, by dtype. The defaults are
  // the seed's mixed-precision Adam (16 B per parameter with the weights): BF16 gradients, an fp32
  // master copy and fp32 moments. Megatron-Core names them grad_reduce_in_fp32 (the gradient buffer
  // in fp32) and, with use_precision_aware_optimizer, main_params_dtype / exp_avg_dtype /
  // exp_avg_sq_dtype (megatron/core/optimizer/optimizer_config.py); 0 master bytes: the optimizer
  // updates the 16-bit weights themselves (torch.optim.Adam on BF16 parameters).
  double gradient_bytes = 2;
  double main_params_bytes = 4;
  double exp_avg_bytes = 4;
  double exp_avg_sq_bytes = 4;
  // FP8 weights (Transformer Engine's fp8_model_init, NeMo's fp8_params): each weight kept as FP8 and
  // its FP8 transpose only, no BF16 copy (the master copy is the optimizer's).
  bool fp8_params = false;
  double optimizer_state_bytes() const { return main_params_bytes + exp_avg_bytes + exp_avg_sq_bytes; }
  double weight_bytes() const { return fp8_params ? 2.0 : fp8 ? 4.0 : 2.0; }
  // The optimizer step's HBM traffic relative to the default dtypes': it reads and writes the master
  // copy and moments, reads the gradient and writes the weight.
  double optimizer_traffic_scale() const {
    return (2.0 * optimizer_state_bytes() + gradient_bytes + (fp8_params ? 1.0 : 2.0)) / (2.0 * 12.0 + 2.0 + 2.0);
  }
  // The gradient synchronisation's bytes relative to BF16 gradients' (b_ar): an all-reduce moves the
  // gradient dtype both ways; a sharded optimizer reduce-scatters gradients and all-gathers the BF16
  // weights.
  double gradient_traffic_scale() const {
    return sharding == Sharding::None ? gradient_bytes / 2.0 : (gradient_bytes + 2.0) / 4.0;
  }
  // HSDP (PyTorch's hybrid sharding, torchtitan's data_parallel_shard_degree with a replicate degree):
  // FSDP (zero3) shards over groups of this many data-parallel ranks, consecutive ranks a group, and
  // each shard is replicated across the data / shard_group groups, its gradients all-reduced across
  // them after the reduce-scatter inside the group. 0: FSDP over all data-parallel ranks.
  long long shard_group = 0;
  bool hsdp() const { return shard_group > 0; }
  // Over how many of the data x context ranks (they hold the same weights) FSDP and the distributed
  // optimizer shard: all of them, or with HSDP the shard group's data ranks x every context rank
  // (torchtitan's dp_shard x cp mesh: context ranks shard with their data ranks). The one place every
  // user asks.
  long long shard_degree(long long data, long long context) const { return (hsdp() ? shard_group : data) * context; }
  bool overlap_bucketed = false;     // PyTorch DDP: all-reduce gradient buckets during the last backward
  double bucket_bytes = 25e6;
};

} // namespace memwall::model
