// The phase split: four phases of a layer add up to the seed's layer_step (FLOPs, bytes, time).
#include "model/layer_cost.hpp"
#include "sim/engine/phase_plan.hpp"
#include "sim/scenario_text.hpp"
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
  CHECK(w.layer(0).fwd_gemm.flops + w.layer(0).bwd_gemm.flops == rel(c.flops));
  CHECK(w.layer(0).fwd_gemm.flops == rel(c.flops / 3.0));
  CHECK(w.layer(0).fwd_gemm.hbm_bytes + w.layer(0).bwd_gemm.hbm_bytes == rel(c.weight_bytes));
  CHECK(w.layer(0).fwd_elementwise.hbm_bytes + w.layer(0).bwd_elementwise.hbm_bytes == rel(c.activation_bytes));
  // At a host speed equal to peak, the roofline work takes the seed's times.
  const double peak = s.gpu.peak_flops_per_s;
  CHECK((w.layer(0).fwd_gemm.roofline_flops + w.layer(0).bwd_gemm.roofline_flops) / peak == rel(c.t_gemm_s));
  CHECK((w.layer(0).fwd_elementwise.roofline_flops + w.layer(0).bwd_elementwise.roofline_flops) / peak ==
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
  CHECK(w.layer(0).fwd_gemm.roofline_flops / s.gpu.peak_flops_per_s ==
        rel(w.layer(0).fwd_gemm.hbm_bytes / s.gpu.hbm_bytes_per_s));
  CHECK(w.layer(0).fwd_gemm.roofline_flops > w.layer(0).fwd_gemm.flops);
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
  CHECK(w.layer(0).fwd_gemm.roofline_flops + w.layer(0).bwd_gemm.roofline_flops ==
        rel(weight_flops / gemm_eff + attention_flops / 0.25, 1e-9));
  CHECK(w.layer(0).fwd_gemm.flops + w.layer(0).bwd_gemm.flops == rel(weight_flops + attention_flops));
}

TEST_CASE("an MoE model: dense and MoE layers each with their own work and gradient share") {
  // DeepSeek-MoE 16B: layer 0 dense (SwiGLU f 10944), layers 1-27 MoE (64 routed experts of 1408,
  // top-6, 2 shared; a token passes 8 experts). Forward linear FLOPs per token, derived here.
  const sim::Scenario s = test::scenario_from_text(
      "name: ds\ngpu: H100-SXM\nmodel: {like: deepseek-moe-16b}\nbatch: {tokens_per_microbatch: 4096}\n"
      "cluster: {gpus: 8, fabric: {kind: star, bandwidth: 50GB/s}}\nallow_oom: true\n",
      "ds.yaml");
  const sim::StepWork w = sim::plan_step_work(s);
  const double d = 2048, T = 4096, seq = 4096, attention = 2 * 4 * d * d; // QKV + projection, 2 FLOPs each
  const double core = 2 * seq * d;                                       // causal: half of 4 s d
  const double dense = attention + 2 * 3 * d * 10944, moe = attention + 2 * 64 * d + 8 * 2 * 3 * d * 1408;
  REQUIRE(w.kinds.size() == 2);
  CHECK(&w.layer(0) != &w.layer(1));
  CHECK(&w.layer(1) == &w.layer(27));
  CHECK(w.layer(0).fwd_gemm.flops == rel((dense + core) * T, 1e-12));
  CHECK(w.layer(1).fwd_gemm.flops == rel((moe + core) * T, 1e-12));
  // Gradient shares: the dense layer's and the MoE layer's parameters (all 66 experts).
  CHECK(w.layer(0).gradient_bytes == rel(2.0 * (4 * d * d + 3 * d * 10944 + 2 * d), 1e-12));
  CHECK(w.layer(1).gradient_bytes == rel(2.0 * (4 * d * d + 64 * d + 66 * 3 * d * 1408 + 2 * d), 1e-12));
}

TEST_CASE("a catalog model's step work: its FLOPs, parameters and LM head, derived here") {
  // Llama-3 8B (d 4096, L 32, 32 heads, 8 KV heads, SwiGLU f 14336, V 128256, untied) at s = 8192:
  // per token, 6 FLOPs per weight of every GEMM (layers and LM head) + causal attention 3 x 2 s d.
  const sim::Scenario s = test::scenario_from_text(
      "name: l8\ngpu: A100-80GB\nmodel: {like: llama3-8b}\nbatch: {tokens_per_microbatch: 8192}\n"
      "cluster: {gpus: 8, fabric: {kind: star, bandwidth: 25GB/s}}\nallow_oom: true\n",
      "l8.yaml");
  const double d = 4096, L = 32, kv = 1024, f = 14336, V = 128256, seq = 8192, T = 8192;
  const double layer_weights = 2 * d * d + 2 * d * kv + 3 * d * f;
  const double per_token = 6 * (L * layer_weights + V * d) + 3 * L * 2 * seq * d;
  const sim::StepWork w = sim::plan_step_work(s);
  const double layers_flops = L * (w.layer(0).fwd_gemm.flops + w.layer(0).bwd_gemm.flops);
  const double head_flops = w.head.fwd_gemm.flops + w.head.bwd_gemm.flops;
  CHECK(layers_flops + head_flops == rel(per_token * T, 1e-12));
  CHECK(head_flops == rel(6 * V * d * T, 1e-12)); // the LM head, its own phases after the last layer
  CHECK(w.layer(0).fwd_gemm.flops == rel((w.layer(0).fwd_gemm.flops + w.layer(0).bwd_gemm.flops) / 3.0, 1e-12));
  // Its loss: logits written and read, their gradient written: 6 bytes per logit.
  CHECK(w.head.fwd_elementwise.hbm_bytes + w.head.bwd_elementwise.hbm_bytes == rel(6 * V * T, 1e-12));
  // Parameters: layers with two RMSNorms each, untied embedding and head, final norm; bf16 gradients.
  const double params = L * (layer_weights + 2 * d) + 2 * V * d + d;
  CHECK(sim::scenario_params(s) == rel(params, 1e-12));
  CHECK(w.gradient_bytes == rel(2.0 * params, 1e-12));
  CHECK(w.embedding_gradient_bytes == rel(2.0 * (V * d + d), 1e-12)); // token embedding, final norm
  CHECK(w.head.gradient_bytes == rel(2.0 * V * d, 1e-12));             // the untied head
  CHECK(w.layer(0).gradient_bytes == rel(2.0 * (layer_weights + 2 * d), 1e-12));
  // The seed's keys alone keep the seed's layer: 72 d^2 + 12 s d per token and layer, no LM head.
  const sim::Scenario seed = test::scenario_from_text(
      "name: seed\ngpu: A100-80GB\nmodel: {hidden: 4096, layers: 32, seq_len: 2048, vocab: 50000}\n"
      "batch: {tokens_per_microbatch: 2048}\ncluster: {gpus: 8, fabric: {kind: star, bandwidth: 25GB/s}}\n",
      "seed.yaml");
  const sim::StepWork sw = sim::plan_step_work(seed);
  CHECK(sw.layer(0).fwd_gemm.flops + sw.layer(0).bwd_gemm.flops == rel((72.0 * d * d + 12.0 * 2048 * d) * 2048, 1e-12));
  CHECK(sw.head.fwd_gemm.roofline_flops + sw.head.bwd_gemm.roofline_flops == 0.0);
}
