// The phase split: four phases of a layer add up to the seed's layer_step (FLOPs, bytes, time).
#include "model/layer_cost.hpp"
#include "sim/phase_plan.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>

using namespace memwall;
using memwall::test::gpu;
using memwall::test::rel;

TEST_CASE("fwd + bwd phases sum to layer_step, and fwd is one third") {
  sim::Scenario s;
  s.gpu = gpu("H100-SXM");
  s.shape = {2048, 24, 1024, 32000};
  s.tokens_per_microbatch = 1024;
  s.gpus = 16;
  const sim::StepWork w = sim::plan_step_work(s);
  const model::LayerCost c = model::layer_step(2048, 1024, s.gpu, {}, 1024);
  CHECK(w.fwd_gemm.flops + w.bwd_gemm.flops == rel(c.flops));
  CHECK(w.fwd_gemm.flops == rel(c.flops / 3.0));
  CHECK(w.fwd_gemm.hbm_bytes + w.bwd_gemm.hbm_bytes == rel(c.weight_bytes));
  CHECK(w.fwd_elementwise.hbm_bytes + w.bwd_elementwise.hbm_bytes == rel(c.activation_bytes));
  // At a host speed equal to peak, the roofline work takes the seed's times.
  const double peak = s.gpu.peak_flops_per_s;
  CHECK((w.fwd_gemm.roofline_flops + w.bwd_gemm.roofline_flops) / peak == rel(c.t_gemm_s));
  CHECK((w.fwd_elementwise.roofline_flops + w.bwd_elementwise.roofline_flops) / peak ==
        rel(c.t_elementwise_s));
  // Gradient: bf16, 2 B/param; optimizer b_opt P / N.
  const double p = 12.0 * 2048 * 2048 * 24 + 2.0 * 32000 * 2048;
  CHECK(w.gradient_bytes == rel(2.0 * p));
  CHECK(w.optimizer.hbm_bytes == rel(30.0 * p / 16.0));
}

TEST_CASE("memory-bound GEMM phase at T = 1 runs at HBM speed") {
  sim::Scenario s;
  s.gpu = gpu("A100-80GB");
  s.shape = {4096, 32, 2048, 50000};
  s.tokens_per_microbatch = 1;
  const sim::StepWork w = sim::plan_step_work(s);
  CHECK(w.fwd_gemm.roofline_flops / s.gpu.peak_flops_per_s ==
        rel(w.fwd_gemm.hbm_bytes / s.gpu.hbm_bytes_per_s));
  CHECK(w.fwd_gemm.roofline_flops > w.fwd_gemm.flops);
}

TEST_CASE("attention FLOPs run at the attention efficiency, the rest at the curve's GEMM efficiency") {
  sim::Scenario s;
  s.gpu = gpu("H100-SXM");
  // Curve: 0.4 at 1 GFLOP, 0.8 at 1 TFLOP. This micro-batch's GEMM size, 2 T d^2 = 2 x 2048 x 2048^2 =
  // 17.2 GFLOP, sits at log10(17.18) / 3 = 0.41167 of the way up: efficiency 0.4 + 0.4 x 0.41167.
  s.gpu.gemm_efficiency_curve = {{1e9, 0.4}, {1e12, 0.8}};
  s.gpu.attention_efficiency = 0.25;
  s.shape = {2048, 24, 4096, 32000};
  s.tokens_per_microbatch = 2048;
  const sim::StepWork w = sim::plan_step_work(s);
  const double d = 2048, t = 2048, seq = 4096;
  const double gemm_eff = 0.4 + 0.4 * std::log10(2.0 * t * d * d / 1e9) / 3.0;
  const double weight_flops = 72.0 * d * d * t, attention_flops = 12.0 * seq * d * t;
  CHECK(w.fwd_gemm.roofline_flops + w.bwd_gemm.roofline_flops ==
        rel(weight_flops / gemm_eff + attention_flops / 0.25, 1e-9));
  CHECK(w.fwd_gemm.flops + w.bwd_gemm.flops == rel(weight_flops + attention_flops));
}
