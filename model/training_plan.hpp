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
  bool overlap_bucketed = false;     // PyTorch DDP: all-reduce gradient buckets during the last backward
  double bucket_bytes = 25e6;
};

} // namespace memwall::model
