#include "memory_footprint.hpp"

namespace memwall::model {

MemoryFootprint memory_footprint(const TransformerShape& shape, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic) {
  const double params = total_params(shape);
  MemoryFootprint f;
  f.weight_bytes = 2.0 * params;
  f.adam_state_bytes = kAdamStateBytesPerParam * params;
  f.activation_bytes = traffic.a_store_bytes_per_token_per_d * double(shape.hidden) * tokens_per_microbatch *
                       double(shape.layers);
  f.total_bytes = f.adam_state_bytes + f.activation_bytes;
  f.capacity_bytes = gpu.hbm_capacity_bytes;
  return f;
}

} // namespace memwall::model
