#include "layer_cost.hpp"

#include "transformer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memwall::model {

double usable_l2_elements(const GpuSpec& gpu, const TrafficConstants& traffic) {
  return traffic.l2_fraction * gpu.l2_bytes / 2.0;
}

void complete_layer_cost(LayerCost& c, const GpuSpec& gpu) {
  c.intensity_flops_per_byte = c.flops / (c.weight_bytes + c.activation_bytes);
  c.t_gemm_s = std::max(c.flops / gpu.peak_flops_per_s, c.weight_bytes / gpu.hbm_bytes_per_s);
  c.t_elementwise_s = c.activation_bytes / gpu.hbm_bytes_per_s;
  c.t_s = c.t_gemm_s + c.t_elementwise_s;
  c.e_arith_j = c.flops * gpu.e_flop_j_per_flop + active_power_w(gpu, 1.0, 1.0) * c.t_s;
  c.e_hbm_weights_j = c.weight_bytes * gpu.e_hbm_j_per_byte;
  c.e_hbm_activations_j = c.activation_bytes * gpu.e_hbm_j_per_byte;
  c.e_static_j = awake_power_w(gpu) * c.t_s;
  c.e_total_j = c.e_arith_j + c.e_hbm_weights_j + c.e_hbm_activations_j + c.e_static_j;
}

LayerCost layer_step(long long hidden, double tokens, const GpuSpec& gpu, const TrafficConstants& traffic,
                     long long seq_len) {
  const double d = double(hidden);
  const double params = params_per_layer(hidden);
  LayerCost c;
  c.flops = 72.0 * d * d * tokens; // fwd 24 d^2 + bwd 48 d^2 per token
  if (seq_len > 0)                 // attention: fwd 4 s d, bwd ~8 s d with recompute
    c.attention_flops = 12.0 * double(seq_len) * d * tokens;
  c.flops += c.attention_flops;
  // W streams once per micro-batch, plus one extra stream per L2-sized input chunk once the T x d input
  // no longer fits in L2 (Hong-Kung bound); the seed sums the two regimes.
  const double z = usable_l2_elements(gpu, traffic);
  c.weight_bytes = params * (traffic.b_w_bytes_per_param + 6.0 * tokens / std::sqrt(z));
  c.activation_bytes = traffic.a_bytes_per_token_per_d * d * tokens;
  complete_layer_cost(c, gpu);
  return c;
}

double t_min_tokens(double hidden, const GpuSpec& gpu, const TrafficConstants& traffic) {
  const double d = double(hidden);
  const double beta = machine_balance_flops_per_byte(gpu);
  // Fold the L2 re-blocking term into an effective activation constant a_eff = a + 72 d / sqrt(Z).
  const double a_eff =
      traffic.a_bytes_per_token_per_d + 72.0 * d / std::sqrt(usable_l2_elements(gpu, traffic));
  const double den = 72.0 * d - a_eff * beta;
  if (den <= 0)
    return std::numeric_limits<double>::infinity();
  return 12.0 * traffic.b_w_bytes_per_param * d * beta / den;
}

double d_min_hidden(const GpuSpec& gpu, const TrafficConstants& traffic) {
  const double beta = machine_balance_flops_per_byte(gpu);
  const double z = usable_l2_elements(gpu, traffic);
  return traffic.a_bytes_per_token_per_d * beta / (72.0 * (1.0 - beta / std::sqrt(z)));
}

double elementwise_time_share(long long hidden, const GpuSpec& gpu, const TrafficConstants& traffic) {
  return traffic.a_bytes_per_token_per_d * machine_balance_flops_per_byte(gpu) / (72.0 * double(hidden));
}

double activation_energy_floor(long long hidden, const GpuSpec& gpu, const TrafficConstants& traffic) {
  return traffic.a_bytes_per_token_per_d * gpu.e_hbm_j_per_byte /
         (72.0 * double(hidden) * gpu.e_flop_j_per_flop);
}

} // namespace memwall::model
