// The power cap. Each expectation is derived here from the power model's statement (model/gpu_power.hpp):
// P(f) = p_static + e_flop V(f)^2 F / t(f) + e_hbm B / t(f), t(f) = max(t_compute / f, t_memory), with
// V(f) linear from (min_clock, min_voltage) to (1, 1). The clock is found here by Newton's method on
// that polynomial, not by the bisection the code uses.
#include "sim/engine/isolated_run.hpp"
#include "sim/engine/phase_plan.hpp"
#include "sim/scenario_text.hpp"
#include "test_support.hpp"

#include <cmath>

using namespace memwall;
using memwall::test::rel;

namespace {

// A single H100 (seed efficiencies: 1) running a 7B-class layer stack; `limit` is gpu.power_limit.
std::string job(const std::string& limit, long long tokens) {
  return "name: capped\n"
         "gpu: {like: H100-SXM" +
         (limit.empty() ? std::string() : ", power_limit: " + limit) +
         "}\n"
         "model: {hidden: 4096, layers: 4, seq_len: 2048, vocab: 32000}\n"
         "batch: {tokens_per_microbatch: " +
         std::to_string(tokens) +
         "}\n"
         "cluster: {gpus: 1}\n"
         "allow_oom: true\n";
}

double voltage(double f) {
  return 0.7 + 0.3 * (f - 0.5) / 0.5;
} // the catalog's H100 curve

// Clock at which a compute-bound phase (t = c / f) draws exactly `limit_w`: Newton on
// g(f) = p_static + e_flop V(f)^2 F f / c + e_hbm B f / c - limit.
double compute_bound_clock(double flops, double bytes, double c, double limit_w) {
  const double e_flop = 0.55e-12, e_hbm = 50e-12, p_static = 90;
  double f = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double v = voltage(f), dv = 0.6;
    const double g = p_static + e_flop * v * v * flops * f / c + e_hbm * bytes * f / c - limit_w;
    const double dg = e_flop * flops / c * (v * v + 2 * v * dv * f) + e_hbm * bytes / c;
    f -= g / dg;
  }
  return f;
}

} // namespace

TEST_CASE("a compute-bound GEMM phase over the limit runs at the clock the power model gives") {
  const sim::Scenario free = test::scenario_from_text(job("", 16384), "free");
  const sim::Scenario capped = test::scenario_from_text(job("450W", 16384), "capped");
  const sim::PhaseCost a = sim::plan_step_work(free).layer(0).fwd_gemm;
  const sim::PhaseCost b = sim::plan_step_work(capped).layer(0).fwd_gemm;
  const double peak = free.gpu.peak_flops_per_s;
  REQUIRE(a.roofline_flops == a.flops); // compute-bound at efficiency 1
  const double c = a.flops / peak;
  // Uncapped it draws more than 450 W.
  REQUIRE(90 + 0.55e-12 * a.flops / c + 50e-12 * a.hbm_bytes / c > 450);
  const double f = compute_bound_clock(a.flops, a.hbm_bytes, c, 450);
  CHECK(f < 0.95);
  CHECK(b.clock == rel(f, 1e-9));
  CHECK(b.roofline_flops / peak == rel(c / f, 1e-9));                // time stretches by 1 / f
  CHECK(b.arith_energy_scale == rel(voltage(f) * voltage(f), 1e-9)); // energy per FLOP by V^2
  // And in the simulated run: the GEMM phases' extra time is exactly what the step gains, and the
  // arithmetic energy is V(f)^2 of the uncapped one (elementwise phases draw 90 + 167.5 W, under the cap).
  const auto r_free = sim::run_isolated(free), r_capped = sim::run_isolated(capped);
  const sim::StepWork w = sim::plan_step_work(free);
  const double gemm_s = 4 * (w.layer(0).fwd_gemm.roofline_flops + w.layer(0).bwd_gemm.roofline_flops) / peak;
  CHECK(r_capped["t_compute_s"].get<double>() - r_free["t_compute_s"].get<double>() ==
        rel(gemm_s * (1 / f - 1), 1e-6));
  CHECK(r_capped["e_arith_j"].get<double>() ==
        rel(r_free["e_arith_j"].get<double>() * voltage(f) * voltage(f), 1e-6));
  CHECK(r_capped["gpu_power_peak_w"].get<double>() == rel(450, 1e-6));
  CHECK(r_capped["gpu_clock_min"].get<double>() == rel(f, 1e-9));
}

TEST_CASE("a memory-bound phase under the same limit keeps its time: only its arithmetic power drops") {
  // A small micro-batch: the GEMMs' FLOPs per byte fall below the H100's ridge (295 FLOP/B), so HBM sets
  // their time (required below).
  const sim::Scenario free = test::scenario_from_text(job("", 256), "free");
  const sim::Scenario capped = test::scenario_from_text(job("450W", 256), "capped");
  const sim::PhaseCost a = sim::plan_step_work(free).layer(0).fwd_gemm;
  const sim::PhaseCost b = sim::plan_step_work(capped).layer(0).fwd_gemm;
  const double peak = free.gpu.peak_flops_per_s;
  const double t_mem = a.hbm_bytes / free.gpu.hbm_bytes_per_s, t_cmp = a.flops / peak;
  REQUIRE(t_mem > t_cmp);
  const double p_full = 90 + 0.55e-12 * a.flops / t_mem + 50e-12 * a.hbm_bytes / t_mem;
  REQUIRE(p_full > 450);
  // At the memory time, P(f) = 90 + HBM + arith x V(f)^2 = 450 gives V; the clock follows from the curve,
  // and as long as t_cmp / f <= t_mem the phase keeps its time.
  const double arith_w = 0.55e-12 * a.flops / t_mem, hbm_w = 50e-12 * a.hbm_bytes / t_mem;
  const double v = std::sqrt((450 - 90 - hbm_w) / arith_w);
  const double f = 0.5 + (v - 0.7) / 0.3 * 0.5;
  REQUIRE(t_cmp / f <= t_mem);
  CHECK(b.clock == rel(f, 1e-9));
  CHECK(b.roofline_flops == rel(a.roofline_flops, 1e-12)); // not slowed at all
  CHECK(b.arith_energy_scale == rel(v * v, 1e-9));
  // Against the compute-bound phase of the same layer at T = 16384, which slows by 1 / f there.
  const sim::PhaseCost big =
      sim::plan_step_work(test::scenario_from_text(job("450W", 16384), "big")).layer(0).fwd_gemm;
  CHECK(big.roofline_flops > 1.05 * sim::plan_step_work(test::scenario_from_text(job("", 16384), "b"))
                                        .layer(0)
                                        .fwd_gemm.roofline_flops);
}

TEST_CASE("a limit no phase reaches changes nothing, bit for bit") {
  const auto none = sim::run_isolated(test::scenario_from_text(job("", 2048), "none"));
  const auto high = sim::run_isolated(test::scenario_from_text(job("5kW", 2048), "high"));
  for (const char* key : {"step_time_s", "t_compute_s", "energy_j", "e_arith_j", "e_hbm_j", "e_static_j",
                          "mj_per_token", "makespan_s"})
    CHECK(none[key].get<double>() == high[key].get<double>());
  CHECK(high["gpu_clock_min"].get<double>() == 1.0);
}

TEST_CASE("activity model: a capped GEMM pays the SMs busy power too, and every second the awake power") {
  // P(f) = (p_static + p_clocked) + p_active f V(f)^2 + e_flop V(f)^2 F / t(f) + e_hbm B / t(f)
  // (model/gpu_spec.hpp), with t = c / f for a compute-bound phase: Newton on it here.
  auto text = [](const std::string& limit) {
    std::string s = job(limit, 16384);
    s.replace(s.find("{like: H100-SXM"), 15, "{like: H100-SXM, power_model: activity, p_clocked: 40W, p_active: 192W");
    return s;
  };
  const sim::Scenario free = test::scenario_from_text(text(""), "free");
  const sim::Scenario capped = test::scenario_from_text(text("450W"), "capped");
  const sim::PhaseCost a = sim::plan_step_work(free).layer(0).fwd_gemm;
  const sim::PhaseCost b = sim::plan_step_work(capped).layer(0).fwd_gemm;
  const double c = a.flops / free.gpu.peak_flops_per_s;
  double f = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double v = voltage(f), dv = 0.6;
    const double g = 130 + 192 * f * v * v + 0.55e-12 * v * v * a.flops * f / c + 50e-12 * a.hbm_bytes * f / c - 450;
    const double dg = (192 + 0.55e-12 * a.flops / c) * (v * v + 2 * v * dv * f) + 50e-12 * a.hbm_bytes / c;
    f -= g / dg;
  }
  // Lower than the per-FLOP model's clock under the same cap: the busy and clocked power take their share.
  CHECK(f < compute_bound_clock(a.flops, a.hbm_bytes, c, 450));
  CHECK(b.clock == rel(f, 1e-9));
  // In the simulated run: static energy is 130 W for every second; the arithmetic energy of the
  // uncapped run is the per-FLOP energy plus 192 W over every kernel's time (all of compute and optimizer).
  const auto r = sim::run_isolated(free);
  const auto seed = sim::run_isolated(test::scenario_from_text(job("", 16384), "seed"));
  CHECK(r["e_static_j"].get<double>() == rel(130 * r["step_time_s"].get<double>(), 1e-9));
  CHECK(r["step_time_s"].get<double>() == rel(seed["step_time_s"].get<double>(), 1e-12));
  CHECK(r["e_arith_j"].get<double>() ==
        rel(seed["e_arith_j"].get<double>() +
                192 * (r["t_compute_s"].get<double>() + r["t_optimizer_s"].get<double>()), 1e-9));
  const auto rc = sim::run_isolated(capped);
  CHECK(rc["gpu_power_peak_w"].get<double>() <= 450 * (1 + 1e-9));
  CHECK(rc["gpu_power_mean_w"].get<double>() <= 450);
}
