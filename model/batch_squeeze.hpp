// The seed's batch-size squeeze (Table 6): the fixed per-step cost (all-reduce + optimizer), in
// token-equivalents of compute, sets the time-optimal global batch B_opt = sqrt(B_crit N T_fixed).
#pragma once

#include "gpu_spec.hpp"
#include "traffic.hpp"

namespace memwall::model {

struct SqueezePoint {
  double t_fixed_s = 0;            // all-reduce + optimizer time per step
  double t_fixed_tokens = 0;       // the same in token-equivalents per GPU: t_fixed peak / (6 P)
  double b_opt_tokens = 0;         // sqrt(B_crit N T_fixed)
  double tokens_per_gpu_opt = 0;   // B_opt / N
};

// From a fixed per-step time, however obtained (closed form or simulation).
SqueezePoint squeeze_from_fixed_time(double t_fixed_s, const GpuSpec& gpu, double params, long long gpus,
                                     double b_crit_tokens);

// The seed's closed form for t_fixed: ring all-reduce over the fabric + optimizer at HBM bandwidth.
double closed_form_fixed_time_s(const GpuSpec& gpu, double params, long long gpus, double fabric_bytes_per_s,
                                const TrafficConstants& traffic);

} // namespace memwall::model
