// Shape of the dense transformer the seed models: L layers of 12 d^2 parameters, plus embeddings.
#pragma once

namespace memwall::model {

struct TransformerShape {
  long long hidden = 0;   // d
  long long layers = 0;   // L
  long long seq_len = 0;  // s; adds the 12 s d T attention FLOPs when > 0
  long long vocab = 0;    // embedding parameters 2 * vocab * d: counted in P, no compute phase
};

inline double params_per_layer(long long d) { return 12.0 * double(d) * double(d); }
inline double layer_params(const TransformerShape& m) { return params_per_layer(m.hidden) * double(m.layers); }
inline double embedding_params(const TransformerShape& m) { return 2.0 * double(m.vocab) * double(m.hidden); }
inline double total_params(const TransformerShape& m) { return layer_params(m) + embedding_params(m); }

} // namespace memwall::model
