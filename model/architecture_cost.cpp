#include "architecture_cost.hpp"

#include <algorithm>
#include <cmath>

namespace memwall::model {

bool is_seed_shaped(const ArchitectureSpec& m) {
  return m.seed_embeddings && m.ffn == FfnKind::Gelu && ffn_hidden_of(m) == 4 * m.hidden &&
         kv_heads_of(m) == m.heads && m.moe.experts == 0 && !m.mla.on() && !m.lm_head && !m.causal && !m.bias &&
         m.norm == NormKind::None && m.position == PositionKind::None;
}

LayerCost architecture_layer_step(const ArchitectureSpec& m, long long layer, double tokens, const GpuSpec& gpu,
                                  const TrafficConstants& traffic) {
  if (is_seed_shaped(m))
    return layer_step(m.hidden, tokens, gpu, traffic, m.seq_len);
  const double d = double(m.hidden);
  const LayerFlops f = layer_forward_flops(m, layer);
  const ParamCounts p = count_params(m);
  const bool moe = is_moe_layer(m, layer);
  const double ffn = moe ? p.moe_ffn : p.dense_ffn, ffn_active = moe ? p.moe_ffn_active : p.dense_ffn;
  const double mtp_extra = is_mtp_layer(m, layer) ? p.mtp_projection : 0.0;
  const double params = p.attention + p.norms_per_layer + ffn + mtp_extra;
  const double active = p.attention + p.norms_per_layer + ffn_active + mtp_extra;

  LayerCost c;
  c.attention_flops = 3.0 * f.attention_core * tokens;
  c.flops = 3.0 * f.linear() * tokens + c.attention_flops;
  const double reblock = 6.0 * tokens / std::sqrt(usable_l2_elements(gpu, traffic));
  // An MTP module streams the shared LM head's weights again and writes its logits (as lm_head_step).
  const double head_weights = is_mtp_layer(m, layer) ? d * double(m.vocab) : 0.0;
  c.weight_bytes = (params + head_weights) * traffic.b_w_bytes_per_param + (active + head_weights) * reblock;
  const double seed_stored = 34.0 * d; // the seed layer's bytes per token, Korthikanti selective
  c.activation_bytes = traffic.a_bytes_per_token_per_d * d * tokens *
                           activation_bytes_per_layer(m, layer, 1.0, Recompute::Selective) / seed_stored +
                       (is_mtp_layer(m, layer) ? 6.0 * double(m.vocab) * tokens : 0.0);
  complete_layer_cost(c, gpu);
  return c;
}

LayerCost lm_head_step(const ArchitectureSpec& m, double tokens, const GpuSpec& gpu, const TrafficConstants& traffic) {
  LayerCost c;
  if (!m.lm_head || is_seed_shaped(m))
    return c;
  const double head_params = double(m.vocab) * double(m.hidden);
  c.flops = 3.0 * lm_head_forward_flops(m) * tokens;
  c.weight_bytes = head_params * (traffic.b_w_bytes_per_param + 6.0 * tokens / std::sqrt(usable_l2_elements(gpu, traffic)));
  c.activation_bytes = 6.0 * double(m.vocab) * tokens;
  complete_layer_cost(c, gpu);
  return c;
}

double stored_activation_bytes(const ArchitectureSpec& m, double tokens, Recompute recompute) {
  double total = 0;
  for (long long l = 0; l < model_layers(m); ++l)
    total += activation_bytes_per_layer(m, l, tokens, recompute);
  return total;
}

} // namespace memwall::model
