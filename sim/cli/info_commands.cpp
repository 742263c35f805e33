#include "commands.hpp"

#include "model/gpu_catalog.hpp"
#include "model/model_catalog.hpp"
#include "model/layer_cost.hpp"
#include "model/seed_curves.hpp"
#include "model/seed_tables.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>

namespace memwall::cli {

int tables_command() {
  model::print_seed_tables(std::cout, model::GpuCatalog::builtin(), model::TrafficConstants{});
  return kExitOk;
}

int curves_command() {
  const model::SeedCurves c = model::seed_curves(model::GpuCatalog::builtin());
  auto finite_or_null = [](const std::vector<double>& v) {
    nlohmann::json out = nlohmann::json::array();
    for (double x : v)
      out.push_back(std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr));
    return out;
  };
  nlohmann::json j;
  j["tokens"] = c.tokens;
  for (const auto& [d, v] : c.intensity)
    j["intensity"][std::to_string(d)] = v;
  j["machine_balance"] = c.machine_balance;
  j["energy_balance_a100"] = c.energy_balance_a100;
  j["hidden"] = c.hidden;
  for (const auto& [g, v] : c.t_min)
    j["t_min"][g] = finite_or_null(v);
  j["d_min"] = c.d_min;
  j["gpu_order"] = c.gpu_order;
  j["energy_share"] = c.energy_share;
  j["t_min_4096"] = c.t_min_4096;
  std::cout << j.dump() << "\n";
  return kExitOk;
}

int gpus_command() {
  const auto& catalog = model::GpuCatalog::builtin();
  const model::TrafficConstants traffic;
  std::cout << "GPU catalog: " << model::GpuCatalog::default_path() << "\n";
  std::cout << model::format("%-22s %9s %8s %8s %7s %7s %7s %7s %6s %8s %8s %11s %10s %5s %11s\n", "GPU",
                             "peak TF/s", "FP8 TF/s", "HBM TB/s", "HBM GB", "L2 MB", "TDP W", "beta_t", "beta_E", "d_min",
                             "T_min@4k", "NVLink GB/s", "GEMM eff", "attn", "power W");
  for (const auto& g : catalog.gpus()) {
    const double t_min = model::t_min_tokens(4096, g, traffic);
    // A curve shows its range, from its smallest GEMM size to its largest.
    const std::string gemm = g.gemm_efficiency_curve.empty()
                                 ? model::format("%.2f", g.gemm_efficiency)
                                 : model::format("%.2f-%.2f", g.gemm_efficiency_curve.front().efficiency,
                                                 g.gemm_efficiency_curve.back().efficiency);
    const std::string attention =
        g.attention_efficiency > 0 ? model::format("%.2f", g.attention_efficiency) : std::string("=GEMM");
    const std::string fp8 =
        g.peak_fp8_flops_per_s > 0 ? model::format("%.0f", g.peak_fp8_flops_per_s / 1e12) : std::string("-");
    // The power model: static, awake in a job, and a kernel's floor at full clock (activity only).
    const std::string power =
        g.power_model == model::PowerModel::Activity
            ? model::format("%.0f/%.0f/%.0f", g.p_static_w, model::awake_power_w(g),
                            model::awake_power_w(g) + model::active_power_w(g, 1, 1))
            : model::format("%.0f/flop", g.p_static_w);
    std::cout << model::format("%-22s %9.0f %8s %8.2f %7.0f %7.0f %7.0f %7.0f %6.0f %8.0f %8s %11.0f %10s %5s %11s\n",
                               g.name.c_str(), g.peak_flops_per_s / 1e12, fp8.c_str(), g.hbm_bytes_per_s / 1e12,
                               g.hbm_capacity_bytes / 1e9, g.l2_bytes / 1e6, g.tdp_w,
                               model::machine_balance_flops_per_byte(g),
                               model::energy_balance_flops_per_byte(g), model::d_min_hidden(g, traffic),
                               std::isfinite(t_min) ? model::format("%.0f", t_min).c_str() : "never",
                               g.nvlink_bytes_per_s / 1e9, gemm.c_str(), attention.c_str(), power.c_str());
  }
  std::cout
      << "beta_t, beta_E in FLOP/B; d_min: smallest hidden size that can reach beta_t; "
         "T_min@4k: tokens per weight visit needed at d = 4096; GEMM eff, attn: achieved fractions of peak\n"
         "(a range: a curve by GEMM size; see each entry's source in the catalog). power W: static/flop (the seed's "
         "per-FLOP model) or static/awake/busy floor (power_model: activity: waiting in a job, and a kernel at full "
         "clock before its per-FLOP and per-byte energy).\n";
  return kExitOk;
}

int models_command() {
  const auto& catalog = model::ModelCatalog::builtin();
  std::cout << "model catalog: " << model::ModelCatalog::default_path() << "\n";
  std::cout << model::format("%-18s %7s %6s %5s %4s %-7s %6s %7s %8s %8s %9s %10s\n", "model", "hidden", "layers",
                             "heads", "kv", "ffn", "seq", "vocab", "params", "active", "published",
                             "GFLOP/tok");
  for (const auto& m : catalog.models()) {
    const model::ParamCounts p = model::count_params(m);
    const std::string ffn = m.moe.experts > 0 ? model::format("%lldx%lld", m.moe.top_k, m.moe.experts)
                                              : std::string(m.ffn == model::FfnKind::SwiGlu ? "swiglu" : "gelu");
    std::cout << model::format("%-18s %7lld %6lld %5lld %4lld %-7s %6lld %7lld %7.2fB %7.2fB %8s %10.1f\n",
                               m.name.c_str(), m.hidden, m.layers, m.heads, model::kv_heads_of(m), ffn.c_str(),
                               m.seq_len, m.vocab, p.total / 1e9, p.active / 1e9,
                               m.published_params > 0 ? model::format("%.4gB", m.published_params / 1e9).c_str()
                                                      : "-",
                               model::training_flops_per_token(m, model::Recompute::None) / 1e9);
  }
  std::cout << "params, active: counted from the shapes (active: per token, MoE); published: as the source states "
               "it;\nGFLOP/tok: training FLOPs per token (forward + backward, LM head, causal attention at seq, "
               "no recompute).\nSources: each entry's `source` in the catalog.\n";
  return kExitOk;
}

} // namespace memwall::cli
