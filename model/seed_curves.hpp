// The curves behind the seed's three-panel figure, computed from memwall's model:
//  (a) HBM intensity of a training step vs tokens per weight visit, for several d (A100-80GB);
//  (b) T_min vs hidden size d for the seed's GPUs;
//  (c) energy shares (arithmetic, HBM weights, HBM activations, static) vs T at d = 4096 (A100-80GB).
#pragma once

#include "gpu_catalog.hpp"

#include <map>
#include <string>
#include <vector>

namespace memwall::model {

struct SeedCurves {
  std::vector<double> tokens;                                  // T, log-spaced 1 .. 1e5
  std::map<long long, std::vector<double>> intensity;          // d -> I(T)
  std::map<std::string, double> machine_balance;               // GPU -> beta_t
  double energy_balance_a100 = 0;                              // beta_E of A100-80GB
  std::vector<double> hidden;                                  // d, log-spaced 300 .. 30000
  std::map<std::string, std::vector<double>> t_min;            // GPU -> T_min(d) (inf: never)
  std::map<std::string, double> d_min;
  std::vector<std::string> gpu_order;                          // the seed's order
  std::map<std::string, std::vector<double>> energy_share;     // part -> share(T) at d = 4096
  double t_min_4096 = 0;
};

SeedCurves seed_curves(const GpuCatalog& catalog);

} // namespace memwall::model
