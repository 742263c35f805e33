#include "memory_footprint.hpp"

#include "architecture_cost.hpp"

#include <cstdio>

namespace memwall::model {

namespace {

MemoryFootprint footprint_of(double params, double activation_bytes, const GpuSpec& gpu, const TrainingPlan& plan,
                             long long gpus) {
  const double n = double(gpus);
  constexpr double kWeights = 2, kGradients = 2;
  const double optimizer = kAdamStateBytesPerParam - kWeights - kGradients; // fp32 master + m + v
  MemoryFootprint f;
  const bool shard_optimizer = plan.sharding != Sharding::None;
  const double weight_copies = kWeights + (plan.fp8 ? 2.0 : 0.0); // FP8 weight and its transpose
  f.weight_bytes = weight_copies * params / (plan.sharding == Sharding::Zero3 ? n : 1.0);
  f.gradient_bytes =
      kGradients * params / (plan.sharding == Sharding::Zero2 || plan.sharding == Sharding::Zero3 ? n : 1.0);
  f.optimizer_bytes = optimizer * params / (shard_optimizer ? n : 1.0);
  f.activation_bytes = activation_bytes;
  f.total_bytes = f.weight_bytes + f.gradient_bytes + f.optimizer_bytes + f.activation_bytes;
  f.capacity_bytes = gpu.hbm_capacity_bytes;
  return f;
}

} // namespace

MemoryFootprint memory_footprint(const TransformerShape& shape, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic, const TrainingPlan& plan, long long gpus) {
  const double recomputed = double(recomputed_layers(plan, shape.layers));
  const double per_token = 2.0 * recomputed + traffic.a_store_bytes_per_token_per_d * (double(shape.layers) - recomputed);
  return footprint_of(total_params(shape), per_token * double(shape.hidden) * tokens_per_microbatch, gpu, plan, gpus);
}

MemoryFootprint memory_footprint(const ArchitectureSpec& arch, double tokens_per_microbatch, const GpuSpec& gpu,
                                 const TrafficConstants& traffic, const TrainingPlan& plan, long long gpus) {
  if (is_seed_shaped(arch))
    return memory_footprint(TransformerShape{arch.hidden, arch.layers, arch.seq_len, arch.vocab},
                            tokens_per_microbatch, gpu, traffic, plan, gpus);
  // `none` and `selective` store the same: a fused attention kernel keeps no s x s tensors either way.
  double stored = 0;
  for (long long l = 0; l < arch.layers; ++l)
    stored += activation_bytes_per_layer(arch, l, tokens_per_microbatch,
                                         layer_recomputed(plan, l) ? Recompute::Full : Recompute::Selective);
  return footprint_of(count_params(arch).total, stored, gpu, plan, gpus);
}

std::string MemoryFootprint::describe() const {
  char text[256];
  std::snprintf(text, sizeof text,
                "%.1f GB per GPU (weights %.1f, gradients %.1f, optimizer state %.1f, activations %.1f GB) %s %.0f GB "
                "of HBM",
                total_bytes / 1e9, weight_bytes / 1e9, gradient_bytes / 1e9, optimizer_bytes / 1e9,
                activation_bytes / 1e9, fits() ? "<=" : ">", capacity_bytes / 1e9);
  return text;
}

} // namespace memwall::model
