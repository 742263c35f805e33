#include "seed_curves.hpp"

#include "layer_cost.hpp"
#include "seed_tables.hpp"

#include <cmath>

namespace memwall::model {

namespace {

std::vector<double> log_space(double lo, double hi, int n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::pow(10.0, std::log10(lo) + (std::log10(hi) - std::log10(lo)) * i / (n - 1));
  return v;
}

} // namespace

SeedCurves seed_curves(const GpuCatalog& catalog) {
  const TrafficConstants traffic;
  const GpuSpec& a100 = *catalog.find("A100-80GB");
  SeedCurves c;
  c.tokens = log_space(1, 1e5, 300);
  for (long long d : {768, 2048, 4096, 12288})
    for (double t : c.tokens)
      c.intensity[d].push_back(layer_step(d, t, a100, traffic, 0).intensity_flops_per_byte);
  c.hidden = log_space(300, 30000, 400);
  for (const GpuSpec* g : seed_gpus(catalog)) {
    c.gpu_order.push_back(g->display_name);
    c.machine_balance[g->display_name] = machine_balance_flops_per_byte(*g);
    c.d_min[g->display_name] = d_min_hidden(*g, traffic);
    for (double d : c.hidden)
      c.t_min[g->display_name].push_back(t_min_tokens(d, *g, traffic));
  }
  c.energy_balance_a100 = energy_balance_flops_per_byte(a100);
  for (double t : c.tokens) {
    const LayerCost r = layer_step(4096, t, a100, traffic, 0);
    c.energy_share["arith"].push_back(r.e_arith_j / r.e_total_j);
    c.energy_share["hbm_weights"].push_back(r.e_hbm_weights_j / r.e_total_j);
    c.energy_share["hbm_activations"].push_back(r.e_hbm_activations_j / r.e_total_j);
    c.energy_share["static"].push_back(r.e_static_j / r.e_total_j);
  }
  c.t_min_4096 = t_min_tokens(4096, a100, traffic);
  return c;
}

} // namespace memwall::model
