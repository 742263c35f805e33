#include "phase_plan.hpp"

#include "model/architecture_cost.hpp"
#include "model/layer_cost.hpp"
#include "model/step_closed_form.hpp"

#include <algorithm>

namespace memwall::sim {

namespace {

// Achieved efficiencies stretch the work: weight-GEMM FLOPs at the GEMM efficiency for this micro-batch's
// GEMM size, attention FLOPs at the attention efficiency, bytes at hbm_efficiency x bandwidth.
struct Roofline {
  double balance;              // FLOP per HBM byte at peak
  double gemm_efficiency;      // (0, 1]; with FP8, of the BF16 peak: FP8 rate x FP8 efficiency / BF16 peak
  double attention_efficiency; // (0, 1]
  double hbm_efficiency;       // (0, 1]
};

// `flops` includes `attention_flops`.
PhaseCost gemm_phase(PhaseKind kind, double flops, double attention_flops, double bytes, const Roofline& r) {
  const double at_peak =
      (flops - attention_flops) / r.gemm_efficiency + attention_flops / r.attention_efficiency;
  return {kind, flops, bytes, std::max(at_peak, bytes * r.balance / r.hbm_efficiency)};
}

PhaseCost memory_phase(PhaseKind kind, double bytes, const Roofline& r) {
  return {kind, 0.0, bytes, bytes * r.balance / r.hbm_efficiency};
}

} // namespace

double scenario_params(const Scenario& s) {
  const model::ArchitectureSpec arch = architecture_of(s);
  return model::is_seed_shaped(arch) ? model::total_params(s.shape) : model::count_params(arch).total;
}

StepWork plan_step_work(const Scenario& s) {
  const model::ArchitectureSpec arch = architecture_of(s);
  const model::LayerCost layer = model::architecture_layer_step(arch, s.tokens_per_microbatch, s.gpu, s.traffic);
  const double gemm_size = model::gemm_size_flops(s.shape.hidden, s.tokens_per_microbatch);
  // FP8: the weight GEMMs run at the FP8 rate and its own efficiency (default: the BF16 curve's).
  const double bf16_gemm = model::gemm_efficiency_at(s.gpu, gemm_size);
  const double linear_rate =
      s.training.fp8 ? (s.gpu.fp8_gemm_efficiency > 0 ? s.gpu.fp8_gemm_efficiency : bf16_gemm) *
                           s.gpu.peak_fp8_flops_per_s / s.gpu.peak_flops_per_s
                     : bf16_gemm;
  const Roofline balance{model::machine_balance_flops_per_byte(s.gpu), linear_rate,
                         model::attention_efficiency_at(s.gpu, gemm_size), s.gpu.hbm_efficiency};
  constexpr double fwd = 1.0 / 3.0;
  const double bwd = 1.0 - fwd;
  StepWork w;
  // Activation recompute runs each layer's forward again inside its backward.
  const double bwd_share = s.training.activation_recompute ? bwd + fwd : bwd;
  w.fwd_gemm = gemm_phase(PhaseKind::FwdGemm, layer.flops * fwd, layer.attention_flops * fwd,
                          layer.weight_bytes * fwd, balance);
  // Selective recompute runs the attention core's forward (a third of its FLOPs) again in backward.
  const double core_again = s.training.selective_recompute && !s.training.activation_recompute ? fwd : 0.0;
  w.bwd_gemm = gemm_phase(PhaseKind::BwdGemm, layer.flops * bwd_share + layer.attention_flops * core_again,
                          layer.attention_flops * (bwd_share + core_again), layer.weight_bytes * bwd_share, balance);
  w.fwd_elementwise = memory_phase(PhaseKind::FwdElementwise, layer.activation_bytes * fwd, balance);
  w.bwd_elementwise = memory_phase(PhaseKind::BwdElementwise, layer.activation_bytes * bwd_share, balance);
  const double params = scenario_params(s);
  // Sharded optimizer state (ZeRO-1 and up, the seed's model): each GPU updates P / N parameters.
  const long long updaters = s.training.sharding == model::Sharding::None ? 1 : s.gpus;
  w.optimizer = memory_phase(PhaseKind::Optimizer,
                             model::optimizer_bytes_per_gpu(params, updaters, s.traffic), balance);
  // b_ar counts both directions of a ring (reduce-scatter + all-gather), so the gradient is half of it.
  w.gradient_bytes = s.traffic.b_ar_bytes_per_param / 2.0 * params;
  // A layer's share: the average layer (an MoE model's dense and MoE layers alike).
  const double embedding = model::is_seed_shaped(arch) ? model::embedding_params(s.shape)
                                                       : model::count_params(arch).embedding;
  const double layer_params = model::is_seed_shaped(arch) ? model::params_per_layer(s.shape.hidden)
                                                            : (params - embedding) / double(s.shape.layers);
  w.layer_gradient_bytes = s.traffic.b_ar_bytes_per_param / 2.0 * layer_params;
  w.embedding_gradient_bytes = s.traffic.b_ar_bytes_per_param / 2.0 * embedding;
  return w;
}

} // namespace memwall::sim
