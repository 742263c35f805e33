// Achieved efficiencies of one GPU: GEMMs as a constant or a curve by GEMM size, attention kernels
// on their own (FlashAttention runs well below the GEMMs' fraction of peak), HBM bandwidth.
#pragma once

#include <vector>

namespace memwall::model {

struct GpuSpec;
class InputNode;

// One point of a GEMM efficiency curve: the achieved fraction of peak at a GEMM of this size.
struct EfficiencyPoint {
  double gemm_flops = 0; // size: FLOPs of one d x d weight GEMM on one micro-batch, 2 T d^2
  double efficiency = 0; // (0, 1]
};

// A GEMM library's output tile (gemm_waves.hpp): tile and wave quantization over the GPU's SMs.
struct GemmTile {
  long long m = 0; // output rows per tile; 0: no tile model (the seed's behaviour)
  long long n = 0; // output columns per tile
  bool on() const { return m > 0 && n > 0; }
};

// Size key of the curve for a layer of hidden size d on a micro-batch of `tokens`: 2 T d^2 FLOPs.
double gemm_size_flops(long long hidden, double tokens);

// The GEMM efficiency at that size: the curve interpolated linearly in log(size) and held flat
// beyond its ends, or the constant gemm_efficiency when the GPU has no curve.
double gemm_efficiency_at(const GpuSpec& gpu, double gemm_flops);

// Attention FLOPs' efficiency: attention_efficiency when set, otherwise the GEMMs' at that size.
double attention_efficiency_at(const GpuSpec& gpu, double gemm_flops);

// Reads `gemm_efficiency` (a number, or a list of {gemm_flops, efficiency} with sizes increasing),
// `attention_efficiency` and `hbm_efficiency` when present.
void parse_efficiencies(const InputNode& gpu_node, GpuSpec& gpu);

// The transfer rule: a stack profile fitted on one GPU carried to another from its data sheet. The
// achieved efficiencies (the GEMM curve, attention, HBM, FP8 GEMMs) carry as fractions of the
// target's own rates; everything else (rates, memory, power, links) is the target's. Assumes the
// stack's kernels reach the same share of each peak on the new GPU, tails and all.
GpuSpec carry_stack(const GpuSpec& target, const GpuSpec& profile);

} // namespace memwall::model
