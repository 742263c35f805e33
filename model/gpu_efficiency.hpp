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

} // namespace memwall::model
