#include "model/facility_power.hpp"

#include <cmath>

namespace memwall::model {

FacilityStep facility_step(const FacilityPowerSpec& spec, const FabricInventory& fabric, long long gpus,
                           double step_s, double gpu_j_per_gpu, double link_j_per_gpu, double gpu_w_peak) {
  FacilityStep f;
  const double n = double(gpus);
  const double servers = double(fabric.servers);
  f.gpu_j = gpu_j_per_gpu * n;
  f.host_j = spec.host_w_per_node * servers * step_s;
  f.nic_j = spec.nic_w * double(fabric.nics) * step_s;
  const double loss = 1.0 / spec.psu_efficiency - 1.0; // AC drawn per DC watt, beyond the watt
  f.psu_j = (f.gpu_j + f.host_j + f.nic_j) * loss;
  f.node_j = f.gpu_j + f.host_j + f.nic_j + f.psu_j;
  f.switch_j = spec.switch_port_w * double(fabric.switch_ports) * step_s;
  f.link_j = link_j_per_gpu * n;
  f.it_j = f.node_j + f.switch_j + f.link_j;
  f.facility_j = f.it_j * spec.pue;
  if (step_s > 0) {
    f.node_w_mean = f.node_j / servers / step_s;
    f.facility_w_mean = f.facility_j / step_s;
  }
  const double gpus_per_server = n / servers;
  f.node_w_peak =
      (gpus_per_server * gpu_w_peak + host_and_nics_w_per_server(spec, fabric)) * (1.0 + loss);
  return f;
}

RunProjection project_run(const RunBudgetSpec& run, long long gpus, double step_s, double tokens_per_step,
                          double facility_j_per_step) {
  RunProjection p;
  // A run of `tokens` takes whole steps: the last one is not cut short.
  // A wall-clock window holds the whole steps that end inside it.
  p.steps = run.steps > 0        ? run.steps
            : run.duration_s > 0 ? std::floor(run.duration_s / step_s)
                                 : std::ceil(run.tokens / tokens_per_step);
  const double seconds = p.steps * step_s;
  p.days = seconds / 86400.0;
  p.gpu_hours = double(gpus) * seconds / 3600.0;
  const double kwh = p.steps * facility_j_per_step / 3.6e6;
  p.facility_mwh = kwh / 1000.0;
  p.gpu_cost = p.gpu_hours * run.gpu_hour_price;
  p.energy_cost = kwh * run.kwh_price;
  p.cost = p.gpu_cost + p.energy_cost;
  p.co2_t = kwh * run.grid_g_per_kwh / 1e6;
  return p;
}

} // namespace memwall::model
