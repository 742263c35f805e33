// The seed's layer_step, T_min and d_min. Expected values: by hand where short, else printed by the
// seed itself: cd ../shared/seed && /usr/bin/python3 -c "import backprop_memory_wall as s;
//   print(repr(s.layer_step(4096, 2048, s.GPUS['A100-80GB'], s=2048)['B_W']))"   (and likewise)
#include "model/layer_cost.hpp"
#include "test_support.hpp"

#include <cmath>

using namespace memwall;
using memwall::test::gpu;
using memwall::test::rel;

TEST_CASE("layer_step: 7B layer, one 2048-token sequence on A100-80GB (seed Table 5 row 2)") {
  const model::LayerCost c = model::layer_step(4096, 2048, gpu("A100-80GB"), {}, 2048);
  // By hand: 72 d^2 T + 12 s d T = 2,473,901,162,496 + 206,158,430,208.
  CHECK(c.flops == 2680059592704.0);
  CHECK(c.weight_bytes == rel(3198235341.9625683));
  CHECK(c.activation_bytes == 200.0 * 4096 * 2048);
  // Compute-bound: F / peak.
  CHECK(c.t_gemm_s == rel(2680059592704.0 / 312e12));
  CHECK(c.t_elementwise_s == rel(0.0008228158901422266));
  CHECK(c.e_total_j == rel(3.269376078879888));
  CHECK(c.e_total_j == rel(c.e_arith_j + c.e_hbm_weights_j + c.e_hbm_activations_j + c.e_static_j));
}

TEST_CASE("layer_step: T = 1 is weight-streaming bound") {
  const model::LayerCost c = model::layer_step(768, 1, gpu("A100-80GB"), {}, 0);
  CHECK(c.flops == 72.0 * 768 * 768); // no attention term with s = 0
  CHECK(c.weight_bytes == rel(84948085.34826215));
  CHECK(c.t_gemm_s == rel(c.weight_bytes / 2.039e12)); // memory-bound GEMM
  CHECK(c.t_gemm_s == rel(4.166164068085441e-05));
  CHECK(c.e_total_j == rel(0.007648540019624776));
  CHECK(c.intensity_flops_per_byte < 1.0);
}

TEST_CASE("layer_step: very large micro-batch (T = 1e5, d = 12288, H100)") {
  const model::LayerCost c = model::layer_step(12288, 100000, gpu("H100-SXM"), {}, 2048);
  CHECK(c.flops == 1117362585600000.0);
  CHECK(c.weight_bytes == rel(329239572558.5751));
  // The L2 re-blocking term makes the GEMM weight-bound again at very large T.
  CHECK(c.t_gemm_s == rel(1.1297902786653184));
  CHECK(c.e_total_j == rel(751.5830332504939));
}

TEST_CASE("layer_step: A100-40GB, no attention term") {
  const model::LayerCost c = model::layer_step(1024, 512, gpu("A100-40GB"), {}, 0);
  CHECK(c.flops == 38654705664.0);
  CHECK(c.t_gemm_s == rel(0.00012389328738461537));
  CHECK(c.e_total_j == rel(0.06235335886534239));
}

TEST_CASE("d_min and T_min match the seed for its four GPUs") {
  struct Row {
    const char* name;
    double d_min, t_min_4096, t_min_1e6;
  };
  const Row rows[] = {{"A100-80GB", 446.657820164684, 360.9547819008621, 321.73733701618977},
                      {"A100-40GB", 595.1003814064712, 501.30612928528507, 428.7274104581424},
                      {"H100-SXM", 894.7823849592231, 824.3177891851414, 644.8202910084992},
                      {"B200", 822.4649376235028, 740.9567182345507, 592.6621989674277}};
  for (const Row& r : rows) {
    INFO(r.name);
    CHECK(model::d_min_hidden(gpu(r.name), {}) == rel(r.d_min));
    CHECK(model::t_min_tokens(4096, gpu(r.name), {}) == rel(r.t_min_4096));
    CHECK(model::t_min_tokens(1000000, gpu(r.name), {}) == rel(r.t_min_1e6));
  }
}

TEST_CASE("T_min is 'never' below d_min and finite just above it") {
  const auto& g = gpu("A100-40GB");
  const double d_min = model::d_min_hidden(g, {});
  CHECK(std::isinf(model::t_min_tokens(512, g, {}))); // seed Table 3: never
  CHECK(std::isinf(model::t_min_tokens(static_cast<long long>(std::floor(d_min)), g, {})));
  const double just_above = model::t_min_tokens(static_cast<long long>(std::ceil(d_min)), g, {});
  CHECK(std::isfinite(just_above));
  CHECK(just_above > 1e4);
}

TEST_CASE("T_min tends to 12 b_w beta / (72 (1 - beta / sqrt Z)) as d grows") {
  const auto& g = gpu("A100-80GB");
  const double beta = 312e12 / 2.039e12;
  const double z = 0.5 * 40e6 / 2;
  const double limit = 12.0 * 12.0 * beta / (72.0 * (1.0 - beta / std::sqrt(z)));
  CHECK(model::t_min_tokens(1000000000, g, {}) == rel(limit, 1e-6));
  // At the limit, the intensity of a layer equals the machine balance (definition of T_min).
  const double t = model::t_min_tokens(4096, g, {});
  CHECK(model::layer_step(4096, t, g, {}, 0).intensity_flops_per_byte == rel(beta, 1e-9));
}

TEST_CASE("Table 4 ratios by hand") {
  const auto& g = gpu("A100-80GB");
  CHECK(model::elementwise_time_share(4096, g, {}) == rel(200.0 * (312e12 / 2.039e12) / (72.0 * 4096)));
  CHECK(model::activation_energy_floor(768, g, {}) == rel(200.0 * 60e-12 / (72.0 * 768 * 0.9e-12)));
}
