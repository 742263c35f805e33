// What a layer keeps for its backward under Megatron-Core's selective recompute modules, and the
// bytes per parameter of training state by dtype (grad_reduce_in_fp32, the precision-aware
// optimizer, FP8 weights): each against sums derived here by hand from the tensors a module frees
// or a dtype sizes, on DeepSeek-V3 (MLA, MoE) and Llama 3 8B.
#include "model/architecture.hpp"
#include "model/memory_footprint.hpp"
#include "model/model_catalog.hpp"
#include "sim/engine/phase_plan.hpp"
#include "sim/scenario_text.hpp"
#include "test_support.hpp"

#include <string>

using namespace memwall;
using memwall::test::rel;

namespace {

const model::ArchitectureSpec& deepseek() { return *model::ModelCatalog::builtin().find("deepseek-v3"); }

double kept(const model::ArchitectureSpec& m, long long layer, unsigned modules, bool fp8 = false) {
  return model::activation_bytes_per_layer(m, layer, 1.0, model::Recompute::Selective, fp8, modules);
}

sim::Scenario deepseek_scenario(const std::string& training) {
  return test::scenario_from_text(
      "name: ds\ngpu: H100-SXM\nmodel: {like: deepseek-v3}\nbatch: {tokens_per_microbatch: 4096}\n"
      "cluster: {gpus: 8, fabric: {kind: star, bandwidth: 25GB/s}}\nallow_oom: true\ntraining: " +
          training + "\n",
      "ds.yaml");
}

} // namespace

TEST_CASE("recompute modules: each frees the tensors it runs again, per token, by hand (DeepSeek-V3)") {
  const model::ArchitectureSpec& m = deepseek();
  const double h = 7168, heads = 128, nope = 128, rope = 64, v = 128, fe = 2048, f = 18432, k = 8;
  const long long dense = 0, moe = 3;
  const unsigned core = model::kRecomputeCoreAttn;
  // layernorm: the two norms' outputs, i.e. the attention block's input to its down-projections (2 h)
  // and the FFN block's input (2 h); BF16.
  CHECK(kept(m, moe, core) - kept(m, moe, core | model::kRecomputeLayernorm) == 4 * h);
  CHECK(kept(m, dense, core) - kept(m, dense, core | model::kRecomputeLayernorm) == 4 * h);
  // FP8: the down-projections' and a dense MLP's inputs are the 1-byte copies; an MoE layer's FFN input
  // feeds the BF16 router, 2 bytes.
  CHECK(kept(m, dense, core, true) - kept(m, dense, core | model::kRecomputeLayernorm, true) == 2 * h);
  CHECK(kept(m, moe, core, true) - kept(m, moe, core | model::kRecomputeLayernorm, true) == 3 * h);
  // mla_up_proj: Q and K (heads x (nope + rope), 2 bytes each) and V (heads x v), rebuilt from the latents.
  const double qkv_up = 2 * heads * (nope + rope) * 2 + 2 * heads * v;
  CHECK(kept(m, moe, core) - kept(m, moe, core | model::kRecomputeMlaUpProj) == qkv_up);
  CHECK(qkv_up == 131072);
  // moe_act: each of the k routed copies' activation output (the second GEMM's input), fe values.
  CHECK(kept(m, moe, core) - kept(m, moe, core | model::kRecomputeMoeAct) == k * 2 * fe);
  CHECK(kept(m, moe, core, true) - kept(m, moe, core | model::kRecomputeMoeAct, true) == k * fe);
  CHECK(kept(m, dense, core) == kept(m, dense, core | model::kRecomputeMoeAct)); // no experts there
  // shared_experts: the shared expert's gate and up outputs (2 x 2 fe) and their product (2 fe).
  CHECK(kept(m, moe, core) - kept(m, moe, core | model::kRecomputeSharedExperts) == 6 * fe);
  // mlp: a dense layer's gate, up and product (6 f bytes); nothing on an MoE layer.
  CHECK(kept(m, dense, core) - kept(m, dense, core | model::kRecomputeMlp) == 6 * f);
  CHECK(kept(m, moe, core) == kept(m, moe, core | model::kRecomputeMlp));
  // Modules free disjoint tensors: all together free the sum.
  const unsigned all = core | model::kRecomputeLayernorm | model::kRecomputeMlaUpProj | model::kRecomputeMoeAct |
                       model::kRecomputeSharedExperts;
  CHECK(kept(m, moe, core) - kept(m, moe, all) == 4 * h + qkv_up + k * 2 * fe + 6 * fe);
}

TEST_CASE("recompute modules: the work run again, the layer's own forward GEMMs (DeepSeek-V3)") {
  const model::ArchitectureSpec& m = deepseek();
  const double h = 7168, heads = 128, q = 1536, kv = 512, nope = 128, rope = 64, v = 128, rope_k = 64;
  // MLA's up-projections are its QKV GEMMs less the two down-projections (d -> q latent, d -> kv
  // latent + the shared rope key).
  const model::LayerFlops f = model::layer_forward_flops(m, 3);
  const double up = f.qkv - 2 * (h * q + h * (kv + rope_k));
  CHECK(model::recompute_work_per_token(m, 3, model::kRecomputeMlaUpProj).gemm_flops == rel(up));
  CHECK(up == 2 * (q * heads * (nope + rope) + kv * heads * (nope + v)));
  // A dense layer's MLP: its forward FFN FLOPs; shared experts: 1 of the 8 + 1 experts a token visits.
  CHECK(model::recompute_work_per_token(m, 0, model::kRecomputeMlp).gemm_flops == model::layer_forward_flops(m, 0).ffn);
  CHECK(model::recompute_work_per_token(m, 3, model::kRecomputeSharedExperts).gemm_flops == rel(f.ffn / 9.0));
  // Element-wise: two norms read and write h values (8 h bytes); SwiGLU reads 2 fe and writes fe per
  // routed copy (6 fe bytes, 8 copies).
  CHECK(model::recompute_work_per_token(m, 3, model::kRecomputeLayernorm).elementwise_bytes == 8 * h);
  CHECK(model::recompute_work_per_token(m, 3, model::kRecomputeMoeAct).elementwise_bytes == 8 * 6 * 2048.0);

  // In the engine's phases: the backward GEMMs gain exactly the up-projections' FLOPs for the
  // micro-batch's 4,096 tokens, the backward element-wise phase the norms' bytes, nothing else moves.
  const sim::Scenario base = deepseek_scenario("{activation_recompute: selective}");
  const sim::Scenario more =
      deepseek_scenario("{activation_recompute: selective, recompute_modules: [core_attn, mla_up_proj, layernorm]}");
  const sim::StepWork a = sim::plan_step_work(base), b = sim::plan_step_work(more);
  CHECK(b.layer(3).bwd_gemm.flops - a.layer(3).bwd_gemm.flops == rel(4096 * up, 1e-9));
  CHECK(b.layer(3).bwd_elementwise.hbm_bytes - a.layer(3).bwd_elementwise.hbm_bytes == rel(4096 * 8 * h, 1e-9));
  CHECK(b.layer(3).fwd_gemm.flops == a.layer(3).fwd_gemm.flops);
  // Without core_attn, the attention core's forward is not run again: 1/2 (causal) x 2 s x heads x
  // (nope + rope + v) FLOPs per token less in the backward.
  const sim::Scenario no_core = deepseek_scenario("{activation_recompute: selective, recompute_modules: [layernorm]}");
  const double core_fwd = 0.5 * 2 * 4096 * heads * (nope + rope + v);
  CHECK(a.layer(3).bwd_gemm.flops - sim::plan_step_work(no_core).layer(3).bwd_gemm.flops == rel(4096 * core_fwd, 1e-9));
}

TEST_CASE("training state by dtype: bytes per parameter and the optimizer step's traffic, by hand") {
  // One stage of Llama 3 8B on 8 GPUs (DP 8, distributed optimizer): P parameters, the state of P / 8.
  const model::ArchitectureSpec& llama = *model::ModelCatalog::builtin().find("llama3-8b");
  model::ParallelLayout dp8;
  dp8.data = 8;
  dp8.stage_layers = {llama.layers};
  const model::GpuSpec& gpu = test::gpu("H100-SXM");
  auto footprint = [&](const model::TrainingPlan& plan) {
    return model::stage_footprint(llama, dp8, 0, 1, 8192, gpu, {}, plan);
  };
  model::TrainingPlan seed; // BF16 weights and gradients, fp32 master and moments (16 B per parameter)
  const auto a = footprint(seed);
  const double P = a.weight_bytes / 2;
  CHECK(P == rel(model::count_params(llama).trained, 1e-6));
  CHECK(a.gradient_bytes == rel(2 * P));
  CHECK(a.optimizer_bytes == rel(12 * P / 8));
  // DeepSeek-V3's recipe: fp32 gradients (grad_reduce_in_fp32), fp32 master, BF16 moments.
  model::TrainingPlan ds = seed;
  ds.gradient_bytes = 4;
  ds.exp_avg_bytes = ds.exp_avg_sq_bytes = 2;
  const auto b = footprint(ds);
  CHECK(b.gradient_bytes == rel(4 * P));
  CHECK(b.optimizer_bytes == rel(8 * P / 8));
  // FP8 weights (fp8_params): the FP8 weight and its transpose, 2 B, where FP8 training otherwise keeps
  // the BF16 weight as well (4 B); a BF16 master copy and moments: 6 B of state.
  model::TrainingPlan nemo = seed;
  nemo.fp8 = true;
  CHECK(footprint(nemo).weight_bytes == rel(4 * P));
  nemo.fp8_params = true;
  nemo.main_params_bytes = nemo.exp_avg_bytes = nemo.exp_avg_sq_bytes = 2;
  CHECK(footprint(nemo).weight_bytes == rel(2 * P));
  CHECK(footprint(nemo).optimizer_bytes == rel(6 * P / 8));
  // The step reads and writes master and moments, reads the gradient, writes the weight: 28 B per
  // parameter by default; DeepSeek's 2 (4 + 2 + 2) + 4 + 2 = 22.
  CHECK(seed.optimizer_traffic_scale() == 1.0);
  CHECK(ds.optimizer_traffic_scale() == rel(22.0 / 28.0));
  // Gradient synchronisation with a sharded optimizer: a reduce-scatter of the gradients and an
  // all-gather of the BF16 weights: (4 + 2) / (2 + 2) with fp32 gradients.
  CHECK(ds.gradient_traffic_scale() == rel(1.5));
  ds.sharding = model::Sharding::None; // one all-reduce of fp32 gradients
  CHECK(ds.gradient_traffic_scale() == rel(2.0));
  // In the engine: the optimizer phase's bytes and the gradient's bytes scale so.
  const sim::Scenario plain = deepseek_scenario("{sharding: zero1}");
  const sim::Scenario fp32 = deepseek_scenario(
      "{sharding: zero1, grad_reduce_in_fp32: true, optimizer_dtypes: {exp_avg: bf16, exp_avg_sq: bf16}}");
  const sim::StepWork w0 = sim::plan_step_work(plain), w1 = sim::plan_step_work(fp32);
  CHECK(w1.optimizer.hbm_bytes == rel(w0.optimizer.hbm_bytes * 22.0 / 28.0));
  CHECK(w1.gradient_bytes == rel(w0.gradient_bytes * 1.5));
}

TEST_CASE("MLA's down-projections are duplicated on every TP rank (Megatron-Core), by hand (DeepSeek-V3)") {
  const model::ArchitectureSpec& m = deepseek();
  const double d = 7168, q = 1536, kv = 512, rope = 64;
  const double per_layer = d * q + d * (kv + rope) + q + kv; // the two down-projections, the latents' norms
  CHECK(model::count_params(m).tp_replicated == per_layer);
  CHECK(per_layer == 15140864);
  // One stage of all 61 layers: at TP 2 a GPU holds half of everything else and all of these.
  model::ParallelLayout tp1, tp2;
  tp1.stage_layers = tp2.stage_layers = {61};
  tp2.tensor = 2;
  tp2.sequence_parallel = true;
  const model::GpuSpec& gpu = test::gpu("H100-SXM");
  const model::TrainingPlan plan;
  const auto a = model::stage_footprint(m, tp1, 0, 1, 4096, gpu, {}, plan);
  const auto b = model::stage_footprint(m, tp2, 0, 1, 4096, gpu, {}, plan);
  CHECK(b.weight_bytes - a.weight_bytes / 2 == rel(2 * 61 * per_layer * (1 - 1.0 / 2), 1e-9));
  // Their GEMMs: with sequence parallelism each rank runs them on half the tokens; without it on all:
  // 6 x (d q + d (kv + rope)) FLOPs per token more in forward and backward, at TP 2 for 4,096 tokens.
  auto layer_flops = [](const sim::Scenario& s) {
    const sim::StepWork w = sim::plan_step_work(s);
    return w.layer(3).fwd_gemm.flops + w.layer(3).bwd_gemm.flops;
  };
  auto tp2_scenario = [](bool sp) {
    return test::scenario_from_text(std::string("name: ds\ngpu: H100-SXM\nmodel: {like: deepseek-v3}\n"
                                                "batch: {tokens_per_microbatch: 4096}\n"
                                                "cluster: {gpus: 8, fabric: {kind: star, bandwidth: 25GB/s}}\n"
                                                "parallelism: {tensor: 2, sequence_parallel: ") +
                                        (sp ? "true" : "false") + "}\nallow_oom: true\n",
                                    "ds.yaml");
  };
  CHECK(layer_flops(tp2_scenario(false)) - layer_flops(tp2_scenario(true)) ==
        rel(3 * 2 * (d * q + d * (kv + rope)) * 4096 * (1 - 1.0 / 2), 1e-9));
}
