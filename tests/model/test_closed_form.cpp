// The seed's step closed form (Table 5), squeeze (Table 6) and memory footprint, against
// values derived by hand in the test or printed by the seed (see test_layer_cost.cpp).
#include "model/batch_squeeze.hpp"
#include "model/memory_footprint.hpp"
#include "model/step_closed_form.hpp"
#include "test_support.hpp"

#include <cmath>

using namespace memwall;
using memwall::test::gpu;
using memwall::test::rel;

namespace {
const model::TransformerShape k7B{4096, 32, 2048, 50000};
}

TEST_CASE("parameter count of the seed's 7B model") {
  CHECK(model::total_params(k7B) == 12.0 * 4096 * 4096 * 32 + 2.0 * 50000 * 4096);
  CHECK(model::total_params(k7B) == 6852050944.0);
}

TEST_CASE("step closed form: the online row (T = 1, one GPU)") {
  const auto& g = gpu("A100-80GB");
  const model::StepMetrics m = model::step_closed_form({g, k7B, {}, 1, 1, 1, 0});
  CHECK(m.t_allreduce_s == 0.0);
  // Optimizer: 30 B/param of all parameters at HBM bandwidth.
  CHECK(m.t_optimizer_s == rel(30.0 * 6852050944.0 / 2.039e12));
  CHECK(m.ms_per_token == Approx(138.749).margin(5e-4)); // seed Table 5
  CHECK(m.mj_per_token == Approx(25337.196).margin(5e-4));
  CHECK(m.slowdown == Approx(1033.76).margin(5e-3));
}

TEST_CASE("step closed form: ring all-reduce term b_ar P (N-1)/N / B") {
  const auto& g = gpu("A100-80GB");
  const double p = model::total_params(k7B);
  const model::StepMetrics m = model::step_closed_form({g, k7B, {}, 2048, 1, 64, 25e9});
  CHECK(m.t_allreduce_s == rel(4.0 * p * 63.0 / 64.0 / 25e9));
  CHECK(m.t_optimizer_s == rel(30.0 * p / 64.0 / 2.039e12));
  CHECK(m.step_time_s == rel(m.t_compute_s + m.t_allreduce_s + m.t_optimizer_s));
  // Energy conservation: parts add up, static power times step time.
  CHECK(m.energy_j == rel(m.e_arith_j + m.e_hbm_j + m.e_static_j));
  CHECK(m.e_static_j == rel(60.0 * m.step_time_s));
  CHECK(m.arith_pct + m.hbm_pct + m.static_pct == Approx(100.0));
}

TEST_CASE("gradient accumulation amortises the fixed per-step cost") {
  const auto& g = gpu("A100-80GB");
  const auto one = model::step_closed_form({g, k7B, {}, 2048, 1, 64, 25e9});
  const auto many = model::step_closed_form({g, k7B, {}, 2048, 64, 64, 25e9});
  CHECK(many.t_compute_s == rel(64.0 * one.t_compute_s));
  CHECK(many.t_allreduce_s == rel(one.t_allreduce_s));
  CHECK(many.ms_per_token < one.ms_per_token);
}

TEST_CASE("batch squeeze: T_fixed and B_opt by hand (seed Table 6, IB N = 64)") {
  const auto& g = gpu("A100-80GB");
  const double p = 12.0 * 4096 * 4096 * 32;
  const double t_fixed = 4.0 * p * 63.0 / 64.0 / 25e9 + 30.0 * p / 64.0 / 2.039e12;
  CHECK(model::closed_form_fixed_time_s(g, p, 64, 25e9, {}) == rel(t_fixed));
  const model::SqueezePoint s = model::squeeze_from_fixed_time(t_fixed, g, p, 64, 1e6);
  CHECK(s.t_fixed_tokens == rel(t_fixed * 312e12 / (6.0 * p)));
  CHECK(s.b_opt_tokens == rel(std::sqrt(1e6 * 64.0 * s.t_fixed_tokens)));
  CHECK(std::round(s.t_fixed_tokens) == 8202.0); // seed: T_fixed = 8202
  CHECK(std::round(s.tokens_per_gpu_opt) == 11321.0);
}

TEST_CASE("memory footprint of the 7B model on one GPU (seed Table 5 header)") {
  const auto& g = gpu("A100-80GB");
  const model::MemoryFootprint f = model::memory_footprint(k7B, 2048, g, {});
  CHECK(f.activation_bytes == 34.0 * 4096 * 2048 * 32); // 9.1 GB
  CHECK(f.weight_bytes + f.gradient_bytes + f.optimizer_bytes == rel(16.0 * 6852050944.0)); // 110 GB
  CHECK(f.total_bytes == rel(f.activation_bytes + 16.0 * 6852050944.0));
  CHECK(f.capacity_bytes == 85100068864.0); // 81158 MiB, as CUDA reports an A100 80GB
  CHECK_FALSE(f.fits()); // 119 GB on an 80 GB A100
  const model::TransformerShape small{2048, 24, 2048, 50000};
  CHECK(model::memory_footprint(small, 2048, g, {}).fits());
}

TEST_CASE("memory footprint by ZeRO stage, by hand") {
  const auto& g = gpu("A100-80GB");
  const double p = 6852050944.0, n = 64, act = 34.0 * 4096 * 2048 * 32;
  auto total = [&](model::Sharding s) {
    model::TrainingPlan plan;
    plan.sharding = s;
    return model::memory_footprint(k7B, 2048, g, {}, plan, 64).total_bytes;
  };
  CHECK(total(model::Sharding::None) == rel(16 * p + act));
  CHECK(total(model::Sharding::Zero1) == rel(4 * p + 12 * p / n + act));
  CHECK(total(model::Sharding::Zero2) == rel(2 * p + 14 * p / n + act));
  CHECK(total(model::Sharding::Zero3) == rel(16 * p / n + act));
  model::TrainingPlan recompute;
  recompute.activation_recompute = true;
  CHECK(model::memory_footprint(k7B, 2048, g, {}, recompute, 64).activation_bytes == 2.0 * 4096 * 2048 * 32);
}
