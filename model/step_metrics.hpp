// Per-GPU figures of one optimizer step, in the seed's Table 5 terms. Filled either by the closed
// form (step_closed_form) or from a simulation's measured totals; the ratios derive from the totals.
#pragma once

namespace memwall::model {

struct StepMetrics {
  // Totals per GPU for one step (means over GPUs when measured).
  double params = 0;
  double tokens_per_gpu = 0;
  double step_time_s = 0;
  double t_compute_s = 0;    // forward + backward phases of all micro-batches
  double t_allreduce_s = 0;  // exposed communication: what the collectives add to the step
  double t_comm_total_s = 0; // all communication, hidden under compute or not
  double t_optimizer_s = 0;
  double flops = 0;          // layer FLOPs of the step
  double hbm_bytes = 0;      // weights + activations + optimizer
  double e_arith_j = 0;
  double e_hbm_j = 0;
  double e_static_j = 0;
  double e_network_j = 0;
  // Derived by finish_ratios().
  double energy_j = 0;
  double ms_per_token = 0;
  double mj_per_token = 0;
  double arith_pct = 0;
  double hbm_pct = 0;
  double static_pct = 0;
  double network_pct = 0;
  double intensity_flops_per_byte = 0;
  double slowdown = 0;       // step time over the time of the step's FLOPs at peak
};

// Fills the derived fields from the totals; peak is the GPU's FLOP/s.
void finish_ratios(StepMetrics& m, double peak_flops_per_s);

} // namespace memwall::model
