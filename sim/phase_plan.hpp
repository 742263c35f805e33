// The work of one GPU in one step, split into the phases the actors simulate. No SimGrid here.
//
// Each layer's FLOPs and HBM bytes (the seed's layer_step) are split 1/3 forward, 2/3 backward
// (forward 24 d^2 of the 72 d^2 FLOPs per token; backward reads W again and writes the gradient),
// so the four phases of a layer sum to exactly the seed's per-layer figures. With activation
// recompute, the backward phases also carry the forward's work again.
#pragma once

#include "scenario.hpp"

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
};

struct StepWork {
  PhaseCost fwd_gemm, fwd_elementwise, bwd_gemm, bwd_elementwise; // one layer, one micro-batch
  PhaseCost optimizer;                                             // once per step, sharded over N
  double gradient_bytes = 0;            // all-reduced per step (b_ar/2 x P)
  double layer_gradient_bytes = 0;      // one layer's share (b_ar/2 x 12 d^2)
  double embedding_gradient_bytes = 0;  // the embeddings' share (b_ar/2 x 2 V d), ready last
};

StepWork plan_step_work(const Scenario& scenario);

// Parameters of the scenario's model (the seed's 12 d^2 L + 2 V d for the seed's layer).
double scenario_params(const Scenario& scenario);

} // namespace memwall::sim
