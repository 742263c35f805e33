// The work of one GPU in one step, split into the phases the actors simulate. No SimGrid here.
//
// Each layer's FLOPs and HBM bytes (the seed's layer_step) are split 1/3 forward, 2/3 backward
// (forward 24 d^2 of the 72 d^2 FLOPs per token; backward reads W again and writes the gradient),
// so the four phases of a layer sum to exactly the seed's per-layer figures. With activation
// recompute, the backward phases also carry the forward's work again.
#pragma once

#include "sim/scenario/scenario.hpp"

#include <vector>

namespace memwall::sim {

enum class PhaseKind { FwdGemm, FwdElementwise, BwdGemm, BwdElementwise, AllReduce, Optimizer };
inline constexpr int kPhaseKinds = 6;

struct PhaseCost {
  PhaseKind kind = PhaseKind::FwdGemm;
  double flops = 0;
  double hbm_bytes = 0;
  // Work at the GPU's peak FLOP/s: the roofline, max(FLOPs, bytes x machine balance) for GEMM
  // phases, bytes x machine balance for memory-bound phases. A host of speed `peak` executes it.
  double roofline_flops = 0;
  // Arithmetic energy: flops x the GPU's e_flop x this scale. 1 at full clock in BF16; an FP8 GEMM's
  // FLOPs cost peak / peak_fp8 of a BF16 FLOP; a capped clock multiplies by V(f)^2 (model/gpu_power.hpp).
  double arith_energy_scale = 1;
  double clock = 1;        // core clock the phase runs at, as a fraction of the maximum
  bool over_limit = false; // draws more than the power limit even at the lowest clock
};

// One layer's phases for one micro-batch, and its share of the gradient (b_ar/2 x its parameters).
struct LayerWork {
  PhaseCost fwd_gemm, fwd_elementwise, bwd_gemm, bwd_elementwise;
  double gradient_bytes = 0;
  double params = 0; // on one GPU (a tensor-parallel GPU holds 1 / t of the layer)
  // MoE layers: the routed experts' parameters among `params` (expert parallelism divides them), and
  // their share of the layer's GEMM work (an expert load imbalance scales that share).
  double routed_expert_params = 0;
  double routed_expert_share = 0;
  bool moe = false;
};

struct StepWork {
  std::vector<LayerWork> kinds;            // the distinct layers (the seed's: one; an MoE model: dense, MoE)
  std::vector<unsigned char> kind_of;      // per layer, an index into kinds
  LayerWork head;                          // the LM head and loss, after the last layer (no work without);
                                           // its gradient share: an untied head's weights
  PhaseCost optimizer;                     // once per step, sharded over N
  double gradient_bytes = 0;               // all-reduced per step (b_ar/2 x P)
  double embedding_gradient_bytes = 0;     // embeddings (b_ar/2 x 2 V d for the seed), ready last
  double embedding_params = 0;             // on one GPU (tensor parallelism splits the vocabulary)
  const LayerWork& layer(long long l) const { return kinds[kind_of[static_cast<size_t>(l)]]; }
};

StepWork plan_step_work(const Scenario& scenario);

// The optimizer's phase on a GPU that holds `params` parameters, its state sharded over `updaters`.
PhaseCost optimizer_phase(const Scenario& scenario, double params, long long updaters);


} // namespace memwall::sim
