// Per-GPU memory footprint of plain data parallelism: Adam mixed-precision state for every
// parameter, plus the saved activations of one micro-batch in flight (34 d T L bytes).
#pragma once

#include "gpu_spec.hpp"
#include "traffic.hpp"
#include "transformer.hpp"

namespace memwall::model {

struct MemoryFootprint {
  double weight_bytes = 0;        // bf16 weights, 2 B/param (part of the Adam state)
  double adam_state_bytes = 0;    // 16 B/param: weights, grads, fp32 master, m, v
  double activation_bytes = 0;    // saved for backward, a_store d T L
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits() const { return total_bytes <= capacity_bytes; }
};

MemoryFootprint memory_footprint(const TransformerShape& shape, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic);

} // namespace memwall::model
