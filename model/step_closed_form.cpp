#include "step_closed_form.hpp"

#include "layer_cost.hpp"

namespace memwall::model {

double ring_allreduce_time_s(double params, long long gpus, double fabric_bytes_per_s,
                             const TrafficConstants& traffic) {
  if (gpus <= 1)
    return 0.0;
  const double n = double(gpus);
  return traffic.b_ar_bytes_per_param * params * (n - 1.0) / n / fabric_bytes_per_s;
}

double optimizer_bytes_per_gpu(double params, long long gpus, const TrafficConstants& traffic) {
  return traffic.b_opt_bytes_per_param * params / double(gpus);
}

StepMetrics step_closed_form(const StepPlan& plan) {
  const GpuSpec& g = plan.gpu;
  const double layers = double(plan.shape.layers);
  const double mb = double(plan.microbatches);
  const LayerCost r = layer_step(plan.shape.hidden, plan.tokens_per_microbatch, g, plan.traffic, plan.shape.seq_len);
  StepMetrics m;
  m.params = total_params(plan.shape);
  m.tokens_per_gpu = plan.tokens_per_microbatch * mb;
  m.t_compute_s = r.t_s * layers * mb;
  const double opt_bytes = optimizer_bytes_per_gpu(m.params, plan.gpus, plan.traffic);
  m.t_optimizer_s = opt_bytes / g.hbm_bytes_per_s;
  m.t_allreduce_s = ring_allreduce_time_s(m.params, plan.gpus, plan.fabric_bytes_per_s, plan.traffic);
  m.t_comm_total_s = m.t_allreduce_s; // nothing overlapped
  m.step_time_s = m.t_compute_s + m.t_optimizer_s + m.t_allreduce_s;
  m.flops = r.flops * layers * mb;
  m.hbm_bytes = (r.weight_bytes + r.activation_bytes) * layers * mb + opt_bytes;
  m.e_arith_j = r.e_arith_j * layers * mb + active_power_w(g, 1.0, 1.0) * m.t_optimizer_s;
  m.e_hbm_j = (r.e_hbm_weights_j + r.e_hbm_activations_j) * layers * mb + opt_bytes * g.e_hbm_j_per_byte;
  m.e_static_j = awake_power_w(g) * m.step_time_s;
  finish_ratios(m, g.peak_flops_per_s);
  return m;
}

} // namespace memwall::model
