#include "table5_layout.hpp"

#include "seed_tables.hpp"

namespace memwall::model {

std::string table5_header() {
  return format("%-40s %12s %9s %9s %7s %6s %8s %9s %9s", "scenario", "tok/step/GPU", "ms/token", "mJ/token",
                "arith%", "HBM%", "static%", "I FLOP/B", "slowdown");
}

std::string table5_row(const std::string& label, const StepMetrics& m) {
  return format("%-40s %12.0f %9.3f %9.3f %7.1f %6.1f %8.1f %9.0f %9.2f", label.c_str(), m.tokens_per_gpu,
                m.ms_per_token, m.mj_per_token, m.arith_pct, m.hbm_pct, m.static_pct, m.intensity_flops_per_byte,
                m.slowdown);
}

} // namespace memwall::model
