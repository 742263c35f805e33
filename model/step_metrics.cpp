#include "step_metrics.hpp"

namespace memwall::model {

void finish_ratios(StepMetrics& m, double peak_flops_per_s) {
  m.energy_j = m.e_arith_j + m.e_hbm_j + m.e_static_j + m.e_network_j;
  m.ms_per_token = 1e3 * m.step_time_s / m.tokens_per_gpu;
  m.mj_per_token = 1e3 * m.energy_j / m.tokens_per_gpu;
  m.arith_pct = 100.0 * m.e_arith_j / m.energy_j;
  m.hbm_pct = 100.0 * m.e_hbm_j / m.energy_j;
  m.static_pct = 100.0 * m.e_static_j / m.energy_j;
  m.network_pct = 100.0 * m.e_network_j / m.energy_j;
  m.intensity_flops_per_byte = m.flops / m.hbm_bytes;
  m.slowdown = m.step_time_s / (m.flops / peak_flops_per_s);
}

} // namespace memwall::model
