#include "batch_squeeze.hpp"

#include "step_closed_form.hpp"

#include <cmath>

namespace memwall::model {

SqueezePoint squeeze_from_fixed_time(double t_fixed_s, const GpuSpec& gpu, double params, long long gpus,
                                     double b_crit_tokens) {
  SqueezePoint p;
  p.t_fixed_s = t_fixed_s;
  p.t_fixed_tokens = t_fixed_s * gpu.peak_flops_per_s / (6.0 * params); // 6 P FLOPs per token
  p.b_opt_tokens = std::sqrt(b_crit_tokens * double(gpus) * p.t_fixed_tokens);
  p.tokens_per_gpu_opt = p.b_opt_tokens / double(gpus);
  return p;
}

double closed_form_fixed_time_s(const GpuSpec& gpu, double params, long long gpus, double fabric_bytes_per_s,
                                const TrafficConstants& traffic) {
  return ring_allreduce_time_s(params, gpus, fabric_bytes_per_s, traffic) +
         optimizer_bytes_per_gpu(params, gpus, traffic) / gpu.hbm_bytes_per_s;
}

} // namespace memwall::model
