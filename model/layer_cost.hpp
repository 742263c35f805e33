// Cost of one transformer layer for one micro-batch of T tokens on one weight-holding GPU: the seed's
// layer_step, plus the closed forms derived from it (T_min, d_min).
#pragma once

#include "gpu_spec.hpp"
#include "traffic.hpp"

namespace memwall::model {

struct LayerCost {
  double flops = 0;            // F = 72 d^2 T (+ 12 s d T)
  double attention_flops = 0;  // the 12 s d T of F (0 without seq_len)
  double weight_bytes = 0;     // B_W = P (b_w + 6 T / sqrt(Z)): weight streaming + L2 re-blocking
  double activation_bytes = 0; // B_act = a d T
  double intensity_flops_per_byte = 0;
  double t_gemm_s = 0;        // max(F / peak, B_W / bw): weights stream while tensor cores run
  double t_elementwise_s = 0; // B_act / bw: memory-bound, tensor cores idle
  double t_s = 0;
  double e_arith_j = 0;
  double e_hbm_weights_j = 0;
  double e_hbm_activations_j = 0;
  double e_static_j = 0;
  double e_total_j = 0;
};

// Usable L2 in bf16 elements, Z = l2_frac * l2 / 2.
double usable_l2_elements(const GpuSpec& gpu, const TrafficConstants& traffic);

// Fills a cost's intensity, times and energies from its FLOPs and bytes (the seed's roofline: weights
// stream while tensor cores run; element-wise traffic after).
void complete_layer_cost(LayerCost& c, const GpuSpec& gpu);

// seq_len <= 0 leaves out the attention term.
LayerCost layer_step(long long hidden, double tokens, const GpuSpec& gpu, const TrafficConstants& traffic,
                     long long seq_len);

// Smallest micro-batch (tokens per weight visit) whose HBM intensity reaches the machine balance;
// +infinity when none does ("never").
double t_min_tokens(double hidden, const GpuSpec& gpu, const TrafficConstants& traffic);

// Below this hidden size no batch reaches the HBM balance (activation traffic alone exceeds it).
double d_min_hidden(const GpuSpec& gpu, const TrafficConstants& traffic);

// Element-wise time over GEMM time at large T, a beta / (72 d) (seed Table 4).
double elementwise_time_share(long long hidden, const GpuSpec& gpu, const TrafficConstants& traffic);
// HBM-activation energy over arithmetic energy, a e_hbm / (72 d e_flop) (seed Table 4).
double activation_energy_floor(long long hidden, const GpuSpec& gpu, const TrafficConstants& traffic);

} // namespace memwall::model
