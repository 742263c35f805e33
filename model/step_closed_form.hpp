// The seed's closed form for one data-parallel training step (Table 5): micro-batches of fwd+bwd,
// a ring all-reduce of the gradients (not overlapped), then an optimizer sharded over the N GPUs.
// memwall's simulator does not call this; tests compare the simulation against it.
#pragma once

#include "gpu_spec.hpp"
#include "step_metrics.hpp"
#include "traffic.hpp"
#include "transformer.hpp"

namespace memwall::model {

struct StepPlan {
  GpuSpec gpu;
  TransformerShape shape;
  TrafficConstants traffic;
  double tokens_per_microbatch = 0;
  long long microbatches = 1;
  long long gpus = 1;
  double fabric_bytes_per_s = 0; // per direction, per GPU; unused when gpus == 1
};

// Ring all-reduce time: b_ar P (N-1)/N / bandwidth.
double ring_allreduce_time_s(double params, long long gpus, double fabric_bytes_per_s,
                             const TrafficConstants& traffic);
// Optimizer bytes per GPU, b_opt P / N, and their time at HBM bandwidth.
double optimizer_bytes_per_gpu(double params, long long gpus, const TrafficConstants& traffic);

StepMetrics step_closed_form(const StepPlan& plan);

} // namespace memwall::model
