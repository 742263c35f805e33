#include "seed_table_layout.hpp"

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

std::string table6_title() {
  return "== Table 6: the batch-size squeeze: time-optimal global batch B_opt = sqrt(B_crit * N * T_fixed) ==";
}

std::string table6_row(const std::string& fabric_label, long long gpus, const SqueezePoint& p) {
  return format("  %-16s N=%5lld: T_fixed=%7.0f tok-eq/GPU  B_opt=%5.2f M tokens T_dev,opt=%7.0f tok/GPU  "
                "(comm parity at %.0f)",
                fabric_label.c_str(), gpus, p.t_fixed_tokens, p.b_opt_tokens / 1e6, p.tokens_per_gpu_opt,
                p.t_fixed_tokens);
}

} // namespace memwall::model
