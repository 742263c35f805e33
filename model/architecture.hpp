// A transformer described by its shapes, and everything that follows from them: parameters (total
// and active), FLOPs per token op by op, and activation memory per layer. One description feeds all
// three, so they cannot drift apart. No SimGrid here.
//
// Conventions (tests/model/test_architecture.cpp checks each against hand-derived formulas):
// - FLOPs: 2 per multiply-add. Backward = 2 x forward for every GEMM (input and weight gradients)
//   and for the attention core. Embedding lookups cost nothing.
// - Attention core (QK^T and attention x V): 4 s d FLOPs per token forward over the full s x s
//   score matrix (the seed's and Megatron's convention, `causal: false`); with `causal: true` half of
//   it, 2 s d: a causal kernel (FlashAttention) skips the score blocks above the diagonal (the
//   diagonal blocks' masked half is neglected, s / block_size of it).
// - Activation memory: Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
//   Transformer Models"), per layer, bf16, with dropout masks: 34 s b h + 5 a s^2 b bytes without
//   recompute, 34 s b h with selective recompute (the attention core's s^2 tensors recomputed), 2 s b h
//   (the layer's input) with full recompute. Grouped-query attention stores K and V at their width,
//   SwiGLU its gate and up projections and their product, by the same accounting.
#pragma once

#include "training_plan.hpp"

#include <string>

namespace memwall::model {

enum class FfnKind { Gelu, SwiGlu };        // 2 matrices (d x f, f x d) or 3 (gate, up, down)
enum class NormKind { None, LayerNorm, RmsNorm };
enum class PositionKind { None, Learned }; // rotary and ALiBi add no parameters
enum class Recompute { None, Selective, Full };

struct MoeSpec {
  long long experts = 0;           // routed experts per MoE layer; 0: a dense model
  long long top_k = 0;             // routed experts per token
  long long expert_ffn_hidden = 0; // f of one expert
  long long shared_experts = 0;    // experts every token passes through (DeepSeek-MoE)
  long long every = 1;             // layer i is MoE when (i + 1) % every == 0 ...
  long long first_dense = 0;       // ... and i >= first_dense
  // Tokens of the busiest expert over the mean (>= 1; 1: balanced routing). With expert parallelism
  // the hot expert sits on the first GPU of each expert-parallel group, which then does that much
  // more of the routed experts' work (and the others less, the total unchanged).
  double imbalance = 1;
  // Megatron-Core's moe_expert_capacity_factor: an expert-parallel rank's experts take at most
  // capacity_factor x the mean tokens, the rest are dropped (0: dropless, the default). With
  // pad_to_capacity (moe_pad_expert_input_to_capacity) every rank's input is padded to exactly that.
  double capacity_factor = 0;
  bool pad_to_capacity = false;
};

// The routed experts' load of an expert-parallel rank, in units of the mean (balanced, dropless)
// tokens, under `moe`'s imbalance and capacity with `ranks` expert-parallel ranks (1: no expert
// parallelism, the imbalance spread over one GPU's experts): the hot rank's (the first of a group),
// every other rank's, and the mean over the ranks (the share of the tokens dispatched, which the
// all-to-all carries).
struct ExpertLoad {
  double hot = 1, other = 1, dispatched = 1;
};
ExpertLoad expert_load(const MoeSpec& moe, long long ranks);

// Multi-head latent attention (DeepSeek-V2/V3, arXiv 2405.04434 Section 2.1): queries through a
// low-rank latent (q_lora_rank; 0: a full d x heads (qk + rope) projection), keys and values from one
// kv_lora_rank latent plus a rope key shared by all heads; per head, qk_head_dim + qk_rope_head_dim
// for QK^T and v_head_dim for A V.
struct MlaSpec {
  long long q_lora_rank = 0;
  long long kv_lora_rank = 0; // > 0: the layer's attention is MLA
  long long qk_head_dim = 0;  // the non-rotary part of a query/key head
  long long qk_rope_head_dim = 0;
  long long v_head_dim = 0;
  bool on() const { return kv_lora_rank > 0; }
};

struct ArchitectureSpec {
  std::string name;
  std::string source; // where the figures come from
  long long hidden = 0;
  long long layers = 0;
  long long heads = 0;
  long long kv_heads = 0; // 0: heads (multi-head attention)
  FfnKind ffn = FfnKind::Gelu;
  long long ffn_hidden = 0; // 0: 4 x hidden
  long long vocab = 0;
  long long seq_len = 0;          // sequence length of the training run (attention FLOPs, activations)
  long long max_positions = 0;    // learned position embeddings: table rows
  bool tied_embeddings = true;    // the LM head reuses the input embedding
  bool lm_head = false;           // compute the output projection and the loss (the seed: no)
  bool causal = false;            // attention FLOPs as a causal kernel executes them
  bool bias = false;              // linear layers carry biases
  NormKind norm = NormKind::None; // two per layer, one at the end
  PositionKind position = PositionKind::None;
  MoeSpec moe;
  MlaSpec mla;
  // Multi-token prediction (DeepSeek-V3, arXiv 2412.19437 Section 2.2): modules after the last layer,
  // each a layer of the last layer's kind, two RMSNorms and a 2d x d projection, sharing the embedding
  // and the LM head (whose GEMM and loss it runs again). Not in `layers`; counted in model_layers().
  long long mtp_layers = 0;
  // The seed counts 2 V d embedding parameters (input and output) whatever the tying.
  bool seed_embeddings = false;
  double published_params = 0;        // total, as the source states it (0: none stated)
  double published_active_params = 0; // MoE: per token
};

long long kv_heads_of(const ArchitectureSpec& m);
long long ffn_hidden_of(const ArchitectureSpec& m);
double kv_width(const ArchitectureSpec& m); // kv_heads x head dimension (MLA: the mean of K's and V's widths)
bool is_moe_layer(const ArchitectureSpec& m, long long layer); // an MTP module's layer: as the last layer
bool is_mtp_layer(const ArchitectureSpec& m, long long layer);   // layer >= layers
long long model_layers(const ArchitectureSpec& m);                // layers + mtp_layers: what stages hold
long long moe_layer_count(const ArchitectureSpec& m);

struct ParamCounts {
  double attention = 0;      // per layer: QKV, output projection (+ biases)
  double dense_ffn = 0;      // per dense layer
  double moe_ffn = 0;        // per MoE layer: router, every routed and shared expert
  double moe_ffn_active = 0; // per MoE layer and token: router, top_k routed and the shared experts
  double norms_per_layer = 0;
  double embedding = 0;      // token (+ position) embeddings, the final norm, an untied LM head
  double total = 0;          // the main model (as sources state a model's size)
  double active = 0;         // per token (= total for a dense model)
  double mtp_projection = 0; // per multi-token-prediction module beyond its layer: [h; e] 2d -> d, two norms
  double mtp_module = 0;     // per multi-token-prediction module: its layer + mtp_projection
  double trained = 0;        // total + the MTP modules: what gradients and the optimizer hold
  // Per layer, of `attention`: what every tensor-parallel rank holds whole. Megatron-Core builds MLA's
  // down-projections (d -> q latent, d -> kv latent + the shared rope key) and the latents' norms as
  // "duplicated" linear layers (megatron/core/transformer/multi_latent_attention.py); with sequence
  // parallelism each rank runs them on its 1 / t of the tokens, without it on all of them.
  double tp_replicated = 0;
  double tp_replicated_flops_per_token = 0; // their forward FLOPs
};
ParamCounts count_params(const ArchitectureSpec& m);

// Forward FLOPs per token of one layer, op by op.
struct LayerFlops {
  double qkv = 0;
  double attention_core = 0; // QK^T and attention x V
  double projection = 0;
  double ffn = 0;            // dense MLP, or the token's experts (routed + shared)
  double router = 0;
  double head = 0; // an MTP module's second pass through the LM head
  double total() const { return qkv + attention_core + projection + ffn + router + head; }
  double linear() const { return qkv + projection + ffn + router + head; } // GEMMs with weights
};
LayerFlops layer_forward_flops(const ArchitectureSpec& m, long long layer);
double lm_head_forward_flops(const ArchitectureSpec& m); // 2 d V (0 without lm_head)

// Training FLOPs per token: forward + backward (2 x forward) + what recompute runs again (selective:
// the attention core's forward; full: the layers' whole forward). The LM head is never recomputed.
double training_flops_per_token(const ArchitectureSpec& m, Recompute recompute);

// Activation bytes one layer keeps for the backward, for `tokens` tokens of sequences of seq_len.
// `fp8_inputs`: the linear layers' inputs saved in FP8 (Transformer Engine's FP8 training).
// `modules`: with selective recompute, Megatron-Core's recompute_modules (training_plan.hpp): each
// frees what it runs again (core_attn's s x s tensors are never kept by a fused kernel anyway).
double activation_bytes_per_layer(const ArchitectureSpec& m, long long layer, double tokens, Recompute recompute,
                                  bool fp8_inputs = false, unsigned modules = kRecomputeCoreAttn);

// What selective recompute's modules other than core_attn run again in one layer's backward, per
// token, for the whole layer (not a TP rank's share): GEMM FLOPs (MLA's up-projections, a dense MLP,
// shared experts) and element-wise HBM bytes (a norm: read its input, write its output; an
// activation function: read the first GEMM's output, write its own), BF16.
struct RecomputeWork {
  double gemm_flops = 0;
  double elementwise_bytes = 0;
};
RecomputeWork recompute_work_per_token(const ArchitectureSpec& m, long long layer, unsigned modules);

// The seed's layer (12 d^2 weights, GELU MLP, 2 V d embedding parameters, full attention FLOPs, no
// LM head): what a scenario gets without `like:` or the new keys.
ArchitectureSpec seed_architecture(long long hidden, long long layers, long long seq_len, long long vocab);

} // namespace memwall::model
