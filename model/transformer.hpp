// Shape of the dense transformer the seed models: L layers of 12 d^2 parameters, plus embeddings.
#pragma once

#include <array>

namespace memwall::model {

struct TransformerShape {
  long long hidden = 0;   // d
  long long layers = 0;   // L
  long long seq_len = 0;  // s; adds the 12 s d T attention FLOPs when > 0
  long long vocab = 0;    // embedding parameters 2 * vocab * d: counted in P, no compute phase
};

// The layer's weight tensors in the order the backward pass completes their gradients (MLP down and
// up projections, attention output projection, fused QKV), in units of d^2; DDP buckets are filled
// tensor by tensor in this order. A linear layer's backward GEMMs (input and weight gradients) are
// proportional to its parameters, so a tensor's gradient is taken as complete after its cumulative
// share of the layer's backward GEMM (attention-score and recomputed work spread evenly over it).
struct WeightTensor {
  const char* name;
  double d2; // parameters / d^2
};
inline constexpr std::array<WeightTensor, 4> kLayerTensorsInBackwardOrder{
    {{"mlp.fc2", 4.0}, {"mlp.fc1", 4.0}, {"attn.proj", 1.0}, {"attn.qkv", 3.0}}};

inline double params_per_layer(long long d) { return 12.0 * double(d) * double(d); }
inline double layer_params(const TransformerShape& m) { return params_per_layer(m.hidden) * double(m.layers); }
inline double embedding_params(const TransformerShape& m) { return 2.0 * double(m.vocab) * double(m.hidden); }
inline double total_params(const TransformerShape& m) { return layer_params(m) + embedding_params(m); }

} // namespace memwall::model
