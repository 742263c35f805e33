// The seed's layer cost (layer_step) generalised to any architecture: one layer's work for a
// micro-batch of T tokens (a dense and an MoE layer differ), and the LM head's as its own cost. A
// seed-shaped architecture gives exactly layer_step's figures. No SimGrid here.
//
// - FLOPs: the architecture's training FLOPs per token (forward + 2 x forward backward), per layer.
// - Weight traffic: every weight streams once per micro-batch (b_w bytes per parameter), plus the
//   seed's L2 re-blocking term 6 T / sqrt(Z) per parameter a token multiplies: for an MoE layer each
//   routed expert sees T top_k / experts tokens, so that term follows the active parameters.
// - Element-wise traffic: the seed's a d T bytes, scaled by the layer's stored activations against the
//   seed layer's 34 d (Korthikanti, selective): a SwiGLU or MoE layer moves more, a GQA layer less.
// - The LM head: its GEMM (2 d V FLOPs per token forward, V d weights) and its loss: logits written
//   and read by the softmax / cross-entropy and the logit gradient written, 6 bytes per token and
//   vocabulary entry.
#pragma once

#include "architecture.hpp"
#include "layer_cost.hpp"

namespace memwall::model {

// True when the architecture is the seed's layer (what a scenario without the new model keys gets):
// such a model takes the seed's own layer_step, bit for bit.
bool is_seed_shaped(const ArchitectureSpec& m);

LayerCost architecture_layer_step(const ArchitectureSpec& m, long long layer, double tokens, const GpuSpec& gpu,
                                  const TrafficConstants& traffic);

// The LM head and loss (all zero without `lm_head`).
LayerCost lm_head_step(const ArchitectureSpec& m, double tokens, const GpuSpec& gpu, const TrafficConstants& traffic);

// Activation bytes stored over all layers for a micro-batch of `tokens` (memory footprint).
double stored_activation_bytes(const ArchitectureSpec& m, double tokens, Recompute recompute);

} // namespace memwall::model
