// Tile and wave quantization of GEMMs (issue 29): a GEMM's C = M x N output is cut into tiles of
// tile_m x tile_n, and the GPU's SMs run one tile each at a time, in waves. A GEMM whose tiles fill
// every SM of every wave runs at the profile's efficiency; a ragged edge pads a tile, and one tile
// past a full wave costs a whole extra wave. The fill is the useful share of the slots paid for:
//   fill = M N / (ceil(ceil(M / tm) ceil(N / tn) / SMs) SMs tm tn)
// A profile that names `gemm_tile` (and a GPU with `sms`) scales its GEMM efficiency by the fill of
// the layer's own GEMMs; without them the fill is 1 (the seed's behaviour).
#pragma once

#include "architecture.hpp"
#include "gpu_efficiency.hpp"

#include <vector>

namespace memwall::model {

struct GpuSpec;

struct GemmShape {
  double m = 0, n = 0, k = 0; // C (m x n) += A (m x k) B (k x n)
  double flops() const { return 2.0 * m * n * k; }
};

// The useful share of the tile slots of the waves one GEMM occupies on `sms` SMs.
double wave_fill(const GemmShape& g, const GemmTile& tile, long long sms);

// The FLOP-weighted fill of a set of GEMMs, so that their time at rate R / fill is sum f_i / (R fill_i).
double wave_fill(const std::vector<GemmShape>& gemms, const GemmTile& tile, long long sms);

// A dense layer's weight GEMMs on one TP rank of `tp`, for a micro-batch of `tokens`: Q, K, V, the
// output projection and the MLP, each as its forward, data-gradient and weight-gradient GEMM.
std::vector<GemmShape> dense_layer_gemms(const ArchitectureSpec& arch, double tokens, long long tp);

// The LM head's GEMMs (vocabulary-parallel under TP): forward, data and weight gradients.
std::vector<GemmShape> lm_head_gemms(const ArchitectureSpec& arch, double tokens, long long tp);

// The fill the GPU's profile gives those GEMMs: 1 without a tile model.
double gpu_wave_fill(const GpuSpec& gpu, const std::vector<GemmShape>& gemms);

} // namespace memwall::model
