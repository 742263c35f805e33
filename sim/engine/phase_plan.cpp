#include "sim/engine/phase_plan.hpp"

#include "model/gemm_waves.hpp"
#include "model/architecture_cost.hpp"
#include "model/layer_cost.hpp"
#include "model/step_closed_form.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace memwall::sim {

namespace {

// Achieved efficiencies stretch the work: weight-GEMM FLOPs at the GEMM efficiency for this micro-batch's
// GEMM size, attention FLOPs at the attention efficiency, bytes at hbm_efficiency x bandwidth.
struct Roofline {
  double balance;              // FLOP per HBM byte at peak
  double gemm_efficiency;      // (0, 1]; with FP8, of the BF16 peak: FP8 rate x FP8 efficiency / BF16 peak
  double attention_efficiency; // (0, 1]
  double hbm_efficiency;       // (0, 1]
  const model::GpuSpec* gpu;   // for the power limit
  double linear_energy_scale;  // energy of a weight-GEMM FLOP over a BF16 FLOP's (FP8: peak / peak_fp8)
};

// Under the GPU's power limit: a phase that would draw more runs at the clock that meets it
// (model/gpu_power.hpp); its compute part stretches by 1 / clock, its arithmetic energy by V^2.
PhaseCost under_power_limit(PhaseCost p, double compute_flops, double memory_flops, const Roofline& r) {
  const double peak = r.gpu->peak_flops_per_s;
  const model::PhaseDemand demand{p.flops, p.hbm_bytes, compute_flops / peak, memory_flops / peak,
                                  r.gpu->e_flop_j_per_flop * p.arith_energy_scale};
  const model::PhaseAtClock at = model::phase_under_limit(*r.gpu, demand, r.gpu->power_limit_w);
  if (at.clock >= 1.0)
    return p;
  p.roofline_flops = std::max(compute_flops / at.clock, memory_flops);
  p.arith_energy_scale *= at.voltage * at.voltage;
  p.clock = at.clock;
  p.over_limit = at.over_limit;
  return p;
}

// `flops` includes `attention_flops`.
PhaseCost gemm_phase(PhaseKind kind, double flops, double attention_flops, double bytes, const Roofline& r) {
  const double at_peak =
      (flops - attention_flops) / r.gemm_efficiency + attention_flops / r.attention_efficiency;
  const double memory = bytes * r.balance / r.hbm_efficiency;
  PhaseCost p{kind, flops, bytes, std::max(at_peak, memory)};
  if (r.linear_energy_scale != 1.0 && flops > 0) // FP8 weight GEMMs; attention stays in BF16
    p.arith_energy_scale = ((flops - attention_flops) * r.linear_energy_scale + attention_flops) / flops;
  return under_power_limit(p, at_peak, memory, r);
}

PhaseCost memory_phase(PhaseKind kind, double bytes, const Roofline& r) {
  const double memory = bytes * r.balance / r.hbm_efficiency;
  return under_power_limit({kind, 0.0, bytes, memory}, 0.0, memory, r);
}

// One GPU's share of a layer (or the LM head) under tensor parallelism of degree t (Megatron-LM's
// column- and row-parallel GEMMs; heads split): GEMM and attention FLOPs and weights divide by t.
// Element-wise work divides by t with sequence parallelism; without it the layer norms, dropouts and
// residual adds (10 of the seed layer's 34 bytes per token and d, Korthikanti et al. 2022, Table 2)
// run on every GPU of the group.
model::LayerCost tensor_share(model::LayerCost c, double t, bool sequence_parallel) {
  if (t <= 1)
    return c;
  c.flops /= t;
  c.attention_flops /= t;
  c.weight_bytes /= t;
  c.activation_bytes *= sequence_parallel ? 1.0 / t : (10.0 + 24.0 / t) / 34.0;
  return c;
}

} // namespace

PhaseCost optimizer_phase(const Scenario& s, double params, long long updaters) {
  const Roofline r{model::machine_balance_flops_per_byte(s.gpu), 1.0, 1.0, s.gpu.hbm_efficiency, &s.gpu, 1.0};
  // The seed's b_opt bytes per parameter, scaled by the dtypes of what the step reads and writes.
  return memory_phase(PhaseKind::Optimizer,
                      model::optimizer_bytes_per_gpu(params, updaters, s.traffic) * s.training.optimizer_traffic_scale(),
                      r);
}

StepWork plan_step_work(const Scenario& s) {
  const model::ArchitectureSpec arch = architecture_of(s);
  // A GPU of a context-parallel group holds 1 / c of each sequence's tokens (attending over all of it).
  const double tokens = s.tokens_per_microbatch / double(s.layout.context);
  // A GPU of a TP group multiplies d x d / t weights: its GEMMs are t times smaller.
  const double tp = double(s.layout.tensor);
  const bool sp = s.layout.sequence_parallel;
  const double gemm_size = model::gemm_size_flops(s.shape.hidden, tokens) / tp;
  // FP8: the weight GEMMs run at the FP8 rate and its own efficiency (default: the BF16 curve's).
  auto linear_rate = [&](double size_flops) {
    const double bf16_gemm = model::gemm_efficiency_at(s.gpu, size_flops);
    return s.training.fp8 ? (s.gpu.fp8_gemm_efficiency > 0 ? s.gpu.fp8_gemm_efficiency : bf16_gemm) *
                                s.gpu.peak_fp8_flops_per_s / s.gpu.peak_flops_per_s
                          : bf16_gemm;
  };
  // An FP8 FLOP costs peak / peak_fp8 of a BF16 one: the board power is the same at twice the rate.
  const double linear_energy = s.training.fp8 ? s.gpu.peak_flops_per_s / s.gpu.peak_fp8_flops_per_s : 1.0;
  // Tile and wave quantization (a stack's gemm_tile): the layer's own GEMMs' fill of the SMs' slots.
  const bool seed = model::is_seed_shaped(arch);
  const bool tiled = s.gpu.gemm_tile.on() && !seed;
  const long long t = s.layout.tensor;
  const double layer_fill = tiled ? model::gpu_wave_fill(s.gpu, model::dense_layer_gemms(arch, tokens, t)) : 1.0;
  const double head_fill = tiled ? model::gpu_wave_fill(s.gpu, model::lm_head_gemms(arch, tokens, t)) : 1.0;
  const Roofline balance{model::machine_balance_flops_per_byte(s.gpu), linear_rate(gemm_size) * layer_fill,
                         model::attention_efficiency_at(s.gpu, gemm_size), s.gpu.hbm_efficiency, &s.gpu,
                         linear_energy};
  // The LM head is one GEMM of V / d times a layer's d x d GEMM (2 T d V FLOPs): it sits at its own
  // point of the efficiency curve, which grows with GEMM size.
  Roofline head_balance = balance;
  head_balance.gemm_efficiency =
      linear_rate(2.0 * tokens * double(arch.hidden) * double(std::max<long long>(arch.vocab, 1)) / tp) *
      head_fill;
  constexpr double fwd = 1.0 / 3.0;
  const double bwd = 1.0 - fwd;
  // b_ar counts both directions of a ring (reduce-scatter + all-gather), so the gradient is half of it.
  const double bytes_per_param = s.traffic.b_ar_bytes_per_param / 2.0 * s.training.gradient_traffic_scale();
  // Split a layer's cost into its four phases. Activation recompute runs each layer's forward again
  // inside its backward; selective recompute its attention core's forward (a third of its FLOPs).
  // Selective recompute's other modules (MLA up-projections, norms, activation functions, MLPs) add
  // their forward GEMMs and element-wise passes to the backward, a TP rank's share of them.
  auto phases = [&](const model::LayerCost& c, bool recomputed, const Roofline& balance,
                    const model::RecomputeWork& again) {
    const double bwd_share = recomputed ? bwd + fwd : bwd;
    const bool core = s.training.recompute_modules & model::kRecomputeCoreAttn;
    const double core_again = s.training.selective_recompute && core ? fwd : 0.0;
    LayerWork l;
    l.fwd_gemm = gemm_phase(PhaseKind::FwdGemm, c.flops * fwd, c.attention_flops * fwd, c.weight_bytes * fwd, balance);
    l.bwd_gemm = gemm_phase(PhaseKind::BwdGemm, c.flops * bwd_share + c.attention_flops * core_again + again.gemm_flops,
                            c.attention_flops * (bwd_share + core_again), c.weight_bytes * bwd_share, balance);
    l.fwd_elementwise = memory_phase(PhaseKind::FwdElementwise, c.activation_bytes * fwd, balance);
    l.bwd_elementwise =
        memory_phase(PhaseKind::BwdElementwise, c.activation_bytes * bwd_share + again.elementwise_bytes, balance);
    return l;
  };
  StepWork w;
  const model::ParamCounts counts = seed ? model::ParamCounts{} : model::count_params(arch);
  // One kind per distinct layer: dense or MoE, recomputed or not (full recompute of every k-th layer).
  std::map<std::tuple<bool, bool, bool>, unsigned char> kind_index;
  w.kind_of.assign(static_cast<size_t>(s.shape.layers), 0);
  for (long long layer = 0; layer < s.shape.layers; ++layer) {
    const bool moe = !seed && model::is_moe_layer(arch, layer);
    const bool recomputed = model::layer_recomputed(s.training, layer);
    const bool mtp = !seed && model::is_mtp_layer(arch, layer);
    auto [it, added] =
        kind_index.emplace(std::tuple{moe, recomputed, mtp}, static_cast<unsigned char>(w.kinds.size()));
    if (added) {
      model::RecomputeWork again;
      if (!seed && !recomputed && s.training.selective_recompute) {
        // A TP rank's share: the GEMMs and the experts' activations split t ways, the norms only with
        // sequence parallelism (without it every rank runs them whole).
        const unsigned modules = s.training.recompute_modules;
        const model::RecomputeWork norms = model::recompute_work_per_token(arch, layer, modules & model::kRecomputeLayernorm);
        again = model::recompute_work_per_token(arch, layer, modules & ~unsigned(model::kRecomputeLayernorm));
        again.gemm_flops *= tokens / tp;
        again.elementwise_bytes = (again.elementwise_bytes / tp + norms.elementwise_bytes / (sp ? tp : 1.0)) * tokens;
      }
      model::LayerCost cost =
          tensor_share(model::architecture_layer_step(arch, layer, tokens, s.gpu, s.traffic), tp, sp);
      if (!seed && !sp && tp > 1) // MLA's duplicated down-projections run whole on every TP rank
        cost.flops += 3.0 * counts.tp_replicated_flops_per_token * tokens * (1.0 - 1.0 / tp);
      LayerWork l = phases(cost, recomputed, balance, again);
      const double layer_params = seed  ? model::params_per_layer(s.shape.hidden)
                                  : mtp ? counts.mtp_module
                                        : counts.attention + counts.norms_per_layer +
                                              (moe ? counts.moe_ffn : counts.dense_ffn);
      // What every TP rank holds whole (MLA's down-projections): its gradients too, reduced whole.
      const double whole = seed ? 0.0 : counts.tp_replicated;
      l.gradient_bytes = bytes_per_param * ((layer_params - whole) / tp + whole);
      l.params = (layer_params - whole) / tp + whole;

      if (moe) {
        // Routed experts: (experts) x (one expert's weights), of the MoE FFN's router + all experts.
        const double router = double(arch.hidden) * double(arch.moe.experts);
        const double per_expert = (counts.moe_ffn - router) / double(arch.moe.experts + arch.moe.shared_experts);
        l.routed_expert_params = per_expert * double(arch.moe.experts) / tp;
        const model::LayerFlops f = model::layer_forward_flops(arch, layer);
        const double routed_flops =
            f.ffn * double(arch.moe.top_k) / double(arch.moe.top_k + arch.moe.shared_experts);
        l.routed_expert_share = routed_flops / f.total();
        l.moe = true;
      }
      w.kinds.push_back(l);
    }
    w.kind_of[size_t(layer)] = it->second;
  }
  // The LM head is vocabulary-parallel under TP (its logits too).
  w.head = phases(tensor_share(model::lm_head_step(arch, tokens, s.gpu, s.traffic), tp, true), false,
                  head_balance, {});
  const double params = scenario_params(s);
  // Sharded optimizer state (ZeRO-1 and up, the seed's model): each GPU updates P / N parameters.
  const long long updaters = s.training.sharding == model::Sharding::None ? 1 : s.gpus;
  w.optimizer = memory_phase(PhaseKind::Optimizer,
                             model::optimizer_bytes_per_gpu(params, updaters, s.traffic) *
                                 s.training.optimizer_traffic_scale(),
                             balance);
  w.gradient_bytes = bytes_per_param * params / tp;
  // An untied LM head's gradient is complete first in the backward (DDP's first bucket); tied, or
  // never computed, it is the embedding's and is complete last.
  const double head_params = !seed && arch.lm_head && !arch.tied_embeddings ? double(arch.vocab) * double(arch.hidden) : 0.0;
  w.head.gradient_bytes = bytes_per_param * head_params / tp;
  w.head.params = head_params / tp;
  w.embedding_params = (seed ? model::embedding_params(s.shape) : counts.embedding - head_params) / tp;
  w.embedding_gradient_bytes =
      bytes_per_param * (seed ? model::embedding_params(s.shape) : counts.embedding - head_params) / tp;
  return w;
}

} // namespace memwall::sim
