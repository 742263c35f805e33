#include "architecture.hpp"

#include <algorithm>

namespace memwall::model {

namespace {

double d_of(const ArchitectureSpec& m) { return double(m.hidden); }

// Parameters of one feed-forward block of inner width f.
double ffn_params(const ArchitectureSpec& m, double f) {
  const double d = d_of(m);
  const double matrices = m.ffn == FfnKind::SwiGlu ? 3.0 : 2.0;
  const double biases = m.bias ? (matrices - 1.0) * f + d : 0.0;
  return matrices * d * f + biases;
}

// Forward FLOPs per token of one feed-forward block of inner width f.
double ffn_flops(const ArchitectureSpec& m, double f) {
  return 2.0 * (m.ffn == FfnKind::SwiGlu ? 3.0 : 2.0) * d_of(m) * f;
}

// Bytes per token a feed-forward block of width f keeps, input excluded: GELU its fc1 output (the
// activation's input) and the activation's output; SwiGLU the gate and up outputs and their product.
double ffn_activation_bytes(const ArchitectureSpec& m, double f) {
  return (m.ffn == FfnKind::SwiGlu ? 6.0 : 4.0) * f;
}

double norm_params(const ArchitectureSpec& m) {
  switch (m.norm) {
  case NormKind::LayerNorm:
    return 2.0 * d_of(m); // scale and shift
  case NormKind::RmsNorm:
    return d_of(m);
  case NormKind::None:
    break;
  }
  return 0.0;
}

// MLA's weights by role: the query and key/value projections (down, norms, up) and the output.
struct MlaParams {
  double qkv = 0, projection = 0, norms = 0;
};
MlaParams mla_params(const ArchitectureSpec& m) {
  const MlaSpec& a = m.mla;
  const double d = d_of(m), h = double(m.heads);
  const double qk = double(a.qk_head_dim + a.qk_rope_head_dim);
  MlaParams p;
  p.qkv = (a.q_lora_rank > 0 ? d * double(a.q_lora_rank) + double(a.q_lora_rank) * h * qk : d * h * qk) +
          d * double(a.kv_lora_rank + a.qk_rope_head_dim) + double(a.kv_lora_rank) * h * double(a.qk_head_dim + a.v_head_dim);
  p.norms = double(a.q_lora_rank + a.kv_lora_rank); // RMSNorm on each latent
  p.projection = h * double(a.v_head_dim) * d;
  return p;
}

} // namespace

long long kv_heads_of(const ArchitectureSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }
long long ffn_hidden_of(const ArchitectureSpec& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.hidden; }

double kv_width(const ArchitectureSpec& m) {
  if (m.mla.on()) // K at qk + rope, V at v per head: their mean, so 2 x kv_width is K and V together
    return 0.5 * double(m.heads) * double(m.mla.qk_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim);
  if (m.heads <= 0)
    return d_of(m);
  return d_of(m) * double(kv_heads_of(m)) / double(m.heads);
}

bool is_mtp_layer(const ArchitectureSpec& m, long long layer) { return layer >= m.layers; }
long long model_layers(const ArchitectureSpec& m) { return m.layers + m.mtp_layers; }

bool is_moe_layer(const ArchitectureSpec& m, long long layer) {
  if (is_mtp_layer(m, layer)) // "the same structure as the main model's layers": its last one's
    layer = m.layers - 1;
  if (m.moe.experts <= 0 || layer < m.moe.first_dense)
    return false;
  const long long every = m.moe.every > 0 ? m.moe.every : 1;
  return (layer + 1) % every == 0;
}

long long moe_layer_count(const ArchitectureSpec& m) {
  long long n = 0;
  for (long long l = 0; l < m.layers; ++l)
    n += is_moe_layer(m, l);
  return n;
}

ParamCounts count_params(const ArchitectureSpec& m) {
  const double d = d_of(m), kv = kv_width(m);
  ParamCounts p;
  p.attention = d * (d + 2.0 * kv) + d * d + (m.bias ? 2.0 * d + 2.0 * kv : 0.0);
  if (m.mla.on()) {
    const MlaParams a = mla_params(m);
    p.attention = a.qkv + a.projection + a.norms;
    const double down = (m.mla.q_lora_rank > 0 ? d * double(m.mla.q_lora_rank) : 0.0) +
                        d * double(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
    p.tp_replicated = down + a.norms;
    p.tp_replicated_flops_per_token = 2.0 * down;
  }
  p.dense_ffn = ffn_params(m, double(ffn_hidden_of(m)));
  if (m.moe.experts > 0) {
    const double expert = ffn_params(m, double(m.moe.expert_ffn_hidden));
    const double router = d * double(m.moe.experts);
    p.moe_ffn = router + double(m.moe.experts + m.moe.shared_experts) * expert;
    p.moe_ffn_active = router + double(m.moe.top_k + m.moe.shared_experts) * expert;
  }
  p.norms_per_layer = 2.0 * norm_params(m);
  const double vocab_table = double(m.vocab) * d;
  if (m.seed_embeddings)
    p.embedding = 2.0 * vocab_table;
  else
    p.embedding = vocab_table * (m.tied_embeddings ? 1.0 : 2.0) +
                  (m.position == PositionKind::Learned ? double(m.max_positions) * d : 0.0) + norm_params(m);
  const double moe_layers = double(moe_layer_count(m)), dense_layers = double(m.layers) - moe_layers;
  const double common = double(m.layers) * (p.attention + p.norms_per_layer) + p.embedding;
  p.total = common + dense_layers * p.dense_ffn + moe_layers * p.moe_ffn;
  p.active = common + dense_layers * p.dense_ffn + moe_layers * p.moe_ffn_active;
  if (m.mtp_layers > 0) { // the layer, two norms on its inputs and the [h; e] 2d -> d projection
    p.mtp_projection = 2.0 * norm_params(m) + 2.0 * d * d;
    p.mtp_module = p.attention + p.norms_per_layer + (is_moe_layer(m, m.layers) ? p.moe_ffn : p.dense_ffn) +
                   p.mtp_projection;
  }
  p.trained = p.total + double(m.mtp_layers) * p.mtp_module;
  return p;
}

LayerFlops layer_forward_flops(const ArchitectureSpec& m, long long layer) {
  const double d = d_of(m), kv = kv_width(m), s = double(m.seq_len);
  LayerFlops f;
  f.qkv = 2.0 * d * (d + 2.0 * kv);
  f.attention_core = (m.causal ? 0.5 : 1.0) * 4.0 * s * d; // QK^T and A V, 2 s d each over full rows
  f.projection = 2.0 * d * d;
  if (m.mla.on()) { // QK^T over heads x (qk + rope), A V over heads x v
    const MlaParams a = mla_params(m);
    f.qkv = 2.0 * a.qkv;
    f.projection = 2.0 * a.projection;
    f.attention_core = (m.causal ? 0.5 : 1.0) * 2.0 * s * double(m.heads) *
                       double(m.mla.qk_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim);
  }
  if (is_moe_layer(m, layer)) {
    f.router = 2.0 * d * double(m.moe.experts);
    f.ffn = double(m.moe.top_k + m.moe.shared_experts) * ffn_flops(m, double(m.moe.expert_ffn_hidden));
  } else {
    f.ffn = ffn_flops(m, double(ffn_hidden_of(m)));
  }
  if (is_mtp_layer(m, layer)) { // its 2d -> d projection, and the shared LM head run again
    f.projection += 2.0 * 2.0 * d * d;
    f.head = 2.0 * d * double(m.vocab);
  }
  return f;
}

double lm_head_forward_flops(const ArchitectureSpec& m) {
  return m.lm_head ? 2.0 * d_of(m) * double(m.vocab) : 0.0;
}

double training_flops_per_token(const ArchitectureSpec& m, Recompute recompute) {
  double layers_forward = 0, attention_core = 0;
  for (long long l = 0; l < model_layers(m); ++l) {
    const LayerFlops f = layer_forward_flops(m, l);
    layers_forward += f.total();
    attention_core += f.attention_core;
  }
  const double forward = layers_forward + lm_head_forward_flops(m);
  double again = 0;
  if (recompute == Recompute::Selective)
    again = attention_core;
  else if (recompute == Recompute::Full)
    again = layers_forward;
  return 3.0 * forward + again;
}

double activation_bytes_per_layer(const ArchitectureSpec& m, long long layer, double tokens, Recompute recompute,
                                  bool fp8_inputs, unsigned modules) {
  const double h = d_of(m), kv = kv_width(m), a = double(m.heads > 0 ? m.heads : 1), s = double(m.seq_len);
  if (recompute == Recompute::Full)
    return 2.0 * h * tokens; // the layer's input
  // Attention: QKV input 2h, Q 2h and K 2kv for QK^T, V 2kv, projection input 2h, dropout mask h;
  // the s x s score tensors (softmax output 2as, its dropout mask as and output 2as) unless recomputed.
  double per_token = 7.0 * h + 4.0 * kv;
  if (m.mla.on()) { // input 2h, the two latents (up-projections' inputs) 2 (q + kv), Q and K 2 x 2 kv_qk,
    // V 2 kv_v, the projection's input 2 kv_v, dropout mask h
    const double qk = double(m.heads) * double(m.mla.qk_head_dim + m.mla.qk_rope_head_dim);
    const double v = double(m.heads) * double(m.mla.v_head_dim);
    per_token = 3.0 * h + 2.0 * double(m.mla.q_lora_rank + m.mla.kv_lora_rank) + 4.0 * qk + 4.0 * v;
  }
  if (recompute == Recompute::None)
    per_token += 5.0 * a * s;
  // Feed-forward: input 2h and dropout mask h, then the block's own tensors; an MoE layer keeps a copy
  // of the input per routed expert a token visits, and the router's probabilities.
  per_token += 3.0 * h;
  if (is_moe_layer(m, layer)) {
    const double fe = double(m.moe.expert_ffn_hidden);
    per_token += double(m.moe.top_k) * (2.0 * h + ffn_activation_bytes(m, fe)) +
                 double(m.moe.shared_experts) * ffn_activation_bytes(m, fe) + 2.0 * double(m.moe.experts);
  } else {
    per_token += ffn_activation_bytes(m, double(ffn_hidden_of(m)));
  }
  // FP8 (Transformer Engine): a linear layer saves its input for the weight gradient as the FP8 copy
  // it cast for the forward GEMM, 1 byte a value, not the BF16 tensor (transformer_engine/pytorch/
  // module/linear.py, layernorm_linear.py, layernorm_mlp.py, grouped_linear.py: `saved_inputmat`
  // is the quantized input unless save_original_input). So 1 byte less per value of the QKV and
  // projection inputs, the first FFN GEMM's input (a routed expert's copy of it) and the second's.
  // The attention core's Q, K, V, the norms' inputs and the first GEMM's output stay 16-bit.
  if (fp8_inputs) {
    per_token -= m.mla.on() ? h + double(m.mla.q_lora_rank + m.mla.kv_lora_rank) + double(m.heads) * double(m.mla.v_head_dim)
                            : 2.0 * h;
    if (is_moe_layer(m, layer))
      per_token -= double(m.moe.top_k) * h +
                   double(m.moe.top_k + m.moe.shared_experts) * double(m.moe.expert_ffn_hidden);
    else
      per_token -= h + double(ffn_hidden_of(m));
  }
  per_token += 4.0 * h; // the two norms' inputs
  if (recompute == Recompute::Selective) {
    const bool moe = is_moe_layer(m, layer);
    // layernorm: the norms' outputs go, i.e. the attention block's first input (QKV, or MLA's down-
    // projections) and the FFN block's (a dense MLP's first GEMM; an MoE layer's router and dispatch,
    // kept 16-bit as the router runs in BF16); the norms' inputs stay (they are the residual stream).
    if (modules & kRecomputeLayernorm)
      per_token -= (fp8_inputs ? h : 2.0 * h) + (fp8_inputs && !moe ? h : 2.0 * h);
    if ((modules & kRecomputeMlaUpProj) && m.mla.on()) // Q, K and V, rebuilt from the two latents
      per_token -= 4.0 * double(m.heads) * double(m.mla.qk_head_dim + m.mla.qk_rope_head_dim) +
                   2.0 * double(m.heads) * double(m.mla.v_head_dim);
    // The activation function's output: the second GEMM's input (FP8 when the linear inputs are).
    const double act_out = fp8_inputs ? 1.0 : 2.0;
    if ((modules & kRecomputeMoeAct) && moe)
      per_token -= double(m.moe.top_k) * act_out * double(m.moe.expert_ffn_hidden);
    if ((modules & kRecomputeSharedExperts) && moe) // all but the shared experts' input (the dispatch's)
      per_token -= double(m.moe.shared_experts) *
                   (ffn_activation_bytes(m, double(m.moe.expert_ffn_hidden)) -
                    (fp8_inputs ? double(m.moe.expert_ffn_hidden) : 0.0));
    if ((modules & kRecomputeMlp) && !moe) // all but the MLP's input
      per_token -= ffn_activation_bytes(m, double(ffn_hidden_of(m))) - (fp8_inputs ? double(ffn_hidden_of(m)) : 0.0);
  }
  if (is_mtp_layer(m, layer))
    per_token += 4.0 * h + 4.0 * h; // its two norms' inputs and the projection's [h; e] input
  return per_token * tokens;
}

RecomputeWork recompute_work_per_token(const ArchitectureSpec& m, long long layer, unsigned modules) {
  const double h = d_of(m);
  const bool moe = is_moe_layer(m, layer);
  RecomputeWork w;
  if (modules & kRecomputeLayernorm)
    w.elementwise_bytes += 2.0 * (2.0 * h + 2.0 * h); // two norms, each reads h and writes h values
  if ((modules & kRecomputeMlaUpProj) && m.mla.on()) {
    const double heads = double(m.heads);
    w.gemm_flops += 2.0 * (double(m.mla.q_lora_rank) * heads * double(m.mla.qk_head_dim + m.mla.qk_rope_head_dim) +
                           double(m.mla.kv_lora_rank) * heads * double(m.mla.qk_head_dim + m.mla.v_head_dim));
  }
  // An activation function reads its input (2 f values for a gated one: gate and up) and writes f.
  const double act_bytes_per_f = m.ffn == FfnKind::SwiGlu ? 6.0 : 4.0;
  if ((modules & kRecomputeMoeAct) && moe)
    w.elementwise_bytes += double(m.moe.top_k) * act_bytes_per_f * double(m.moe.expert_ffn_hidden);
  if ((modules & kRecomputeSharedExperts) && moe)
    w.gemm_flops += double(m.moe.shared_experts) * ffn_flops(m, double(m.moe.expert_ffn_hidden));
  if ((modules & kRecomputeMlp) && !moe)
    w.gemm_flops += ffn_flops(m, double(ffn_hidden_of(m)));
  return w;
}

ArchitectureSpec seed_architecture(long long hidden, long long layers, long long seq_len, long long vocab) {
  ArchitectureSpec m;
  m.name = "seed GPT layer";
  m.source = "shared/seed/backprop_memory_wall.py: 12 d^2 weights per layer, 2 V d embeddings";
  m.hidden = hidden;
  m.layers = layers;
  m.seq_len = seq_len;
  m.vocab = vocab;
  m.seed_embeddings = true;
  return m;
}

ExpertLoad expert_load(const MoeSpec& moe, long long ranks) {
  ExpertLoad l;
  const double e = double(ranks);
  if (ranks > 1) { // the hot expert's rank does `imbalance` times the mean, the others share the rest
    l.hot = moe.imbalance;
    l.other = (e - moe.imbalance) / (e - 1.0);
  }
  // Dropless, every token is dispatched: `dispatched` stays 1 exactly (the loads are not summed again
  // in floating point). A capacity clips each rank's tokens, or pads them to it.
  if (moe.capacity_factor > 0) {
    const double c = moe.capacity_factor;
    l.hot = moe.pad_to_capacity ? c : std::min(l.hot, c);
    l.other = moe.pad_to_capacity ? c : std::min(l.other, c);
    l.dispatched = ranks > 1 ? (l.hot + (e - 1.0) * l.other) / e : l.hot;
  }
  return l;
}

} // namespace memwall::model
