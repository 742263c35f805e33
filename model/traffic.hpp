// The seed's traffic constants, counted from the kernel sequence of a fused FlashAttention
// transformer layer (seed, Section 3). All are overridable per scenario.
#pragma once

namespace memwall::model {

struct TrafficConstants {
  // bytes/param per micro-batch at HBM: read W (bf16) fwd 2 + bwd 2 + fp32 grad read-modify-write 8
  double b_w_bytes_per_param = 12;
  // inter-kernel activation traffic, bytes per token per layer per unit of hidden size (fused, FlashAttention)
  double a_bytes_per_token_per_d = 200;
  // saved-activation capacity, bytes per token per layer per unit d (Korthikanti et al. 2022, Megatron)
  double a_store_bytes_per_token_per_d = 34;
  // bytes/param per optimizer step (Adam: fp32 master + m + v, bf16 copy)
  double b_opt_bytes_per_param = 30;
  // bytes/param a ring all-reduce moves per GPU per step (bf16 gradients, reduce-scatter + all-gather)
  double b_ar_bytes_per_param = 4;
  // fraction of L2 usable for GEMM blocking
  double l2_fraction = 0.5;
};

// Adam mixed-precision state: bf16 weights 2 + bf16 grads 2 + fp32 master 4 + m 4 + v 4 (seed Table 5).
inline constexpr double kAdamStateBytesPerParam = 16;

} // namespace memwall::model
