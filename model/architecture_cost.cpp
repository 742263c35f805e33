#include "architecture_cost.hpp"

#include <algorithm>
#include <cmath>

namespace memwall::model {

bool is_seed_shaped(const ArchitectureSpec& m) {
  return m.seed_embeddings && m.ffn == FfnKind::Gelu && ffn_hidden_of(m) == 4 * m.hidden &&
         kv_heads_of(m) == m.heads && m.moe.experts == 0 && !m.lm_head && !m.causal && !m.bias &&
         m.norm == NormKind::None && m.position == PositionKind::None;
}

LayerCost architecture_layer_step(const ArchitectureSpec& m, double tokens, const GpuSpec& gpu,
                                  const TrafficConstants& traffic) {
  if (is_seed_shaped(m))
    return layer_step(m.hidden, tokens, gpu, traffic, m.seq_len);
  const double layers = double(m.layers), d = double(m.hidden);
  double linear = 0, core = 0, stored = 0;
  for (long long l = 0; l < m.layers; ++l) {
    const LayerFlops f = layer_forward_flops(m, l);
    linear += f.linear();
    core += f.attention_core;
    stored += activation_bytes_per_layer(m, l, 1.0, Recompute::Selective);
  }
  const ParamCounts p = count_params(m);
  const double moe_layers = double(moe_layer_count(m));
  const double layer_params = (p.total - p.embedding) / layers;
  const double layer_active = layer_params - moe_layers * (p.moe_ffn - p.moe_ffn_active) / layers;
  const double head = lm_head_forward_flops(m);
  const double head_params = m.lm_head ? double(m.vocab) * d : 0.0;

  LayerCost c;
  c.attention_flops = 3.0 * core / layers * tokens;
  c.flops = 3.0 * (linear + head) / layers * tokens + c.attention_flops;
  const double reblock = 6.0 * tokens / std::sqrt(usable_l2_elements(gpu, traffic));
  c.weight_bytes = (layer_params + head_params / layers) * traffic.b_w_bytes_per_param +
                   (layer_active + head_params / layers) * reblock;
  const double seed_stored = 34.0 * d; // the seed layer's bytes per token, Korthikanti selective
  c.activation_bytes = traffic.a_bytes_per_token_per_d * d * tokens * (stored / layers) / seed_stored +
                       (m.lm_head ? 6.0 * double(m.vocab) * tokens / layers : 0.0);
  complete_layer_cost(c, gpu);
  return c;
}

double stored_activation_bytes(const ArchitectureSpec& m, double tokens, Recompute recompute) {
  double total = 0;
  for (long long l = 0; l < m.layers; ++l)
    total += activation_bytes_per_layer(m, l, tokens, recompute);
  return total;
}

} // namespace memwall::model
