// The architecture description against formulas derived here by hand and published counts:
// the seed's layer, Narayanan et al. 2021 (Eq. 3) for GPT-3 175B, Llama-3 8B and 70B, Mixtral 8x7B
// (total vs active), every catalog entry's published parameter count within 0.5%, Korthikanti et
// al. 2022's activation memory per layer, and the recompute conventions.
#include "model/architecture.hpp"
#include "model/architecture_cost.hpp"
#include "model/gpu_catalog.hpp"
#include "model/memory_footprint.hpp"
#include "model/parallel_layout.hpp"
#include "model/training_plan.hpp"
#include "model/input_error.hpp"
#include "model/model_catalog.hpp"
#include "model/transformer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

using namespace memwall;
using Catch::Detail::Approx;

namespace {

const model::ArchitectureSpec& catalog(const std::string& name) {
  const model::ArchitectureSpec* m = model::ModelCatalog::builtin().find(name);
  REQUIRE(m != nullptr);
  return *m;
}

bool within(double value, double reference, double tolerance) {
  return std::fabs(value / reference - 1.0) <= tolerance;
}

// A published count like 2.8e9 ("2.8B") is stated to +-0.05e9: the relative half-unit of its last
// significant digit.
double stated_rounding(double published) {
  char text[64];
  std::snprintf(text, sizeof text, "%.0f", published);
  std::string digits(text);
  while (!digits.empty() && digits.back() == '0')
    digits.pop_back();
  const double unit = std::pow(10.0, double(std::string(text).size() - digits.size()));
  return 0.5 * unit / published;
}

} // namespace

TEST_CASE("architecture: the seed's layer gives the seed's counts") {
  const double d = 4096, L = 32, s = 2048, V = 50000;
  const auto m = model::seed_architecture(4096, 32, 2048, 50000);
  CHECK(model::count_params(m).total == Approx(12 * d * d * L + 2 * V * d).epsilon(1e-12));
  CHECK(model::count_params(m).total == Approx(model::total_params({4096, 32, 2048, 50000})).epsilon(1e-12));
  // 72 d^2 + 12 s d per token and layer (the seed's F), no LM head.
  CHECK(model::training_flops_per_token(m, model::Recompute::None) ==
        Approx(L * (72 * d * d + 12 * s * d)).epsilon(1e-12));
}

TEST_CASE("architecture: GPT-3 175B as Narayanan et al. 2021 Eq. 3") {
  model::ArchitectureSpec m = catalog("gpt3-175b");
  m.causal = false; // Narayanan count the full s x s attention
  const double h = 12288, L = 96, s = 2048, V = 50257;
  // Without recompute: 72 L h^2 (1 + s / 6h + V / 12 L h) per token; Eq. 3 (full recompute): 96 L h^2
  // (1 + s / 6h + V / 16 L h).
  CHECK(model::training_flops_per_token(m, model::Recompute::None) ==
        Approx(72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))).epsilon(1e-9));
  CHECK(model::training_flops_per_token(m, model::Recompute::Full) ==
        Approx(96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))).epsilon(1e-9));
  CHECK(within(model::count_params(m).total, 175.0e9, 0.005));
}

TEST_CASE("architecture: Llama-3 8B and 70B, grouped-query attention and SwiGLU") {
  for (const auto& [name, published] : {std::pair{"llama3-8b", 8.03e9}, std::pair{"llama3-70b", 70.6e9}}) {
    INFO(name);
    const auto& m = catalog(name);
    const double d = double(m.hidden), L = double(m.layers), f = double(m.ffn_hidden), V = double(m.vocab),
                 s = double(m.seq_len);
    const double kv = d / double(m.heads) * double(m.kv_heads); // 8 KV heads of d / heads
    // Per layer: Q and output projection d^2 each, K and V d kv each, three d f matrices, two RMSNorms.
    const double per_layer = 2 * d * d + 2 * d * kv + 3 * d * f + 2 * d;
    const double params = L * per_layer + 2 * V * d + d; // untied embedding and LM head, final norm
    CHECK(model::count_params(m).total == Approx(params).epsilon(1e-12));
    CHECK(within(model::count_params(m).total, published, 0.005));
    // Training FLOPs: 6 per weight of every GEMM (layers and LM head) + causal attention, 3 x 2 s d.
    const double weights = L * (per_layer - 2 * d) + V * d;
    CHECK(model::training_flops_per_token(m, model::Recompute::None) ==
          Approx(6 * weights + 3 * L * 2 * s * d).epsilon(1e-12));
  }
}

TEST_CASE("architecture: Mixtral 8x7B, total and active parameters") {
  const auto& m = catalog("mixtral-8x7b");
  const double d = 4096, L = 32, fe = 14336, V = 32000, kv = 1024;
  const double attention = 2 * d * d + 2 * d * kv, expert = 3 * d * fe, router = 8 * d, norms = 2 * d;
  CHECK(model::count_params(m).total == Approx(L * (attention + 8 * expert + router + norms) + 2 * V * d + d));
  CHECK(model::count_params(m).active == Approx(L * (attention + 2 * expert + router + norms) + 2 * V * d + d));
  CHECK(within(model::count_params(m).total, 46.7e9, 0.005));
  CHECK(within(model::count_params(m).active, 12.9e9, 0.005));
  // FLOPs follow the active experts: the top-2 experts' GEMMs, not all eight.
  const double s = double(m.seq_len);
  CHECK(model::training_flops_per_token(m, model::Recompute::None) ==
        Approx(6 * (L * (attention + 2 * expert + router) + V * d) + 3 * L * 2 * s * d));
}

TEST_CASE("architecture: the rounding of a stated count") {
  CHECK(stated_rounding(2.8e9) == Approx(0.05 / 2.8));
  CHECK(stated_rounding(8.03e9) == Approx(0.005 / 8.03));
  CHECK(stated_rounding(175e9) == Approx(0.5 / 175));
}

TEST_CASE("architecture: every catalog model matches its published parameter counts within 0.5%") {
  const auto& models = model::ModelCatalog::builtin().models();
  REQUIRE(models.size() >= 14);
  int checked = 0;
  for (const auto& m : models) {
    INFO(m.name << ": " << model::count_params(m).total << " vs " << m.published_params);
    CHECK(!m.source.empty());
    // Within 0.5%, or within the stated figure's rounding where that is coarser (2.8B: +-1.8%).
    if (m.published_params > 0) {
      CHECK(within(model::count_params(m).total, m.published_params,
                   std::max(0.005, stated_rounding(m.published_params))));
      ++checked;
    }
    if (m.published_active_params > 0)
      CHECK(within(model::count_params(m).active, m.published_active_params,
                   std::max(0.005, stated_rounding(m.published_active_params))));
  }
  CHECK(checked >= 14);
}

TEST_CASE("architecture: activation memory per layer as Korthikanti et al. 2022") {
  // GPT-3 175B layer, micro-batch b = 1 of s = 2048: s b h (34 + 5 a s / h) bytes without recompute,
  // 34 s b h with selective recompute, 2 s b h (the input) with full recompute.
  const auto& m = catalog("gpt3-175b");
  const double h = 12288, a = 96, s = 2048, b = 1, tokens = s * b;
  CHECK(model::activation_bytes_per_layer(m, 0, tokens, model::Recompute::None) ==
        Approx(s * b * h * (34 + 5 * a * s / h)).epsilon(1e-12));
  CHECK(model::activation_bytes_per_layer(m, 0, tokens, model::Recompute::Selective) ==
        Approx(34 * s * b * h).epsilon(1e-12));
  CHECK(model::activation_bytes_per_layer(m, 0, tokens, model::Recompute::Full) == Approx(2 * s * b * h));
}

TEST_CASE("architecture: selective recompute adds exactly the attention core's forward FLOPs") {
  for (const char* name : {"gpt3-175b", "llama3-70b", "mixtral-8x7b", "deepseek-moe-16b"}) {
    INFO(name);
    const auto& m = catalog(name);
    double core = 0, layers_forward = 0;
    for (long long l = 0; l < m.layers; ++l) {
      core += model::layer_forward_flops(m, l).attention_core;
      layers_forward += model::layer_forward_flops(m, l).total();
    }
    const double none = model::training_flops_per_token(m, model::Recompute::None);
    CHECK(model::training_flops_per_token(m, model::Recompute::Selective) - none == Approx(core));
    CHECK(model::training_flops_per_token(m, model::Recompute::Full) - none == Approx(layers_forward));
  }
  // Causal attention: the kernel skips the blocks above the diagonal, half of 4 s d forward.
  model::ArchitectureSpec m = catalog("llama3-8b");
  const double causal = model::layer_forward_flops(m, 0).attention_core;
  m.causal = false;
  CHECK(model::layer_forward_flops(m, 0).attention_core == Approx(2 * causal));
  CHECK(causal == Approx(2.0 * 8192 * 4096));
}

TEST_CASE("architecture: inconsistent descriptions are refused at their key") {
  const model::ArchitectureSpec& base = catalog("llama3-8b");
  auto parse = [&](const std::string& text) {
    return model::parse_architecture(model::InputNode::load_string(text, "m.yaml"), &base);
  };
  auto fails_at = [&](const std::string& text, const std::string& key) {
    try {
      parse(text);
    } catch (const model::InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(key) != std::string::npos);
      return;
    }
    FAIL("accepted: " << text);
  };
  fails_at("{kv_heads: 5}", "kv_heads");
  fails_at("{heads: 24}", "heads");                         // 8 KV heads do not divide 24... nor 24 4096
  fails_at("{ffn: relu}", "ffn");
  fails_at("{moe: {experts: 4, top_k: 6, expert_ffn_hidden: 1024}}", "top_k");
  fails_at("{moe: {experts: 4, top_k: 1}}", "expert_ffn_hidden");
  fails_at("{moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024, first_dense: 32}}", "first_dense");
  fails_at("{layers: 0}", "layers");
  // A consistent override: another size of the same family.
  const auto bigger = parse("{hidden: 8192, heads: 64, layers: 80, ffn_hidden: 28672}");
  CHECK(within(model::count_params(bigger).total, 70.6e9, 0.005));
  CHECK(bigger.published_params == 0);
}

TEST_CASE("distributed optimizer: dense state over DP x CP, a routed expert's over DP x CP / EP") {
  // Megatron-Core's distributed optimizer: dense parameters' fp32 master weights, m and v (12 bytes per
  // parameter) sharded over dp_cp_group, routed experts' over expt_dp_group. Per GPU that is 12 P /
  // (DP x CP) whatever EP is: each expert's state spreads over the DP x CP / EP ranks that hold it.
  const model::GpuSpec& gpu = *model::GpuCatalog::builtin().find("H100-SXM");
  const model::TrafficConstants traffic{};
  model::TrainingPlan plan;
  plan.sharding = model::Sharding::Zero1;
  plan.activation_recompute = true;

  const model::ArchitectureSpec& llama = catalog("llama3-8b");
  const double p = model::count_params(llama).total;
  model::ParallelLayout cp2;
  cp2.context = 2;
  cp2.data = 4; // 8 GPUs
  cp2.stage_layers = {llama.layers};
  const auto dense = model::stage_footprint(llama, cp2, 0, 1, 4096, gpu, traffic, plan);
  CHECK(dense.optimizer_bytes == Approx(12.0 * p / 8.0).epsilon(1e-12));
  CHECK(dense.weight_bytes == Approx(2.0 * p).epsilon(1e-12));
  CHECK(dense.gradient_bytes == Approx(2.0 * p).epsilon(1e-12));

  const model::ArchitectureSpec& mixtral = catalog("mixtral-8x7b");
  const double total = model::count_params(mixtral).total;
  const double routed = 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0; // layers x experts x SwiGLU's 3 d x f matrices
  model::ParallelLayout ep4;
  ep4.context = 2;
  ep4.expert = 4;
  ep4.data = 8; // 16 GPUs
  ep4.stage_layers = {mixtral.layers};
  const auto moe = model::stage_footprint(mixtral, ep4, 0, 1, 4096, gpu, traffic, plan);
  CHECK(moe.weight_bytes == Approx(2.0 * (total - routed + routed / 4.0)).epsilon(1e-12));
  CHECK(moe.optimizer_bytes == Approx(12.0 * total / 16.0).epsilon(1e-12));
  // Sharded over DP only, as before, the experts' state would have been 12 x routed / 4 / 8: half this.
  CHECK(moe.optimizer_bytes > 12.0 * (total - routed + routed / 4.0) / 8.0 * 1.5);
}

TEST_CASE("experts folded over TP (expert_tensor_parallel 1) hold whole experts; their state over TP x DP x CP / EP") {
  // Mixtral 8x7B, TP 2, DP 4, EP 8 over the 8 GPUs (4 slots x 2 TP ranks), expert_tensor_parallel 1: each
  // GPU holds 8 / 8 = 1 whole expert per layer, where TP-split experts (EP 4 over DP 4) hold 2 halves.
  // Dense parameters are split over TP as always. The experts' expert-data-parallel group is
  // t d c / (EP x ETP) = 8 / 8 = 1 GPU: their optimizer state is not sharded further.
  const model::GpuSpec& gpu = *model::GpuCatalog::builtin().find("H100-SXM");
  const model::TrafficConstants traffic{};
  model::TrainingPlan plan;
  plan.sharding = model::Sharding::Zero1;
  plan.activation_recompute = true;
  const model::ArchitectureSpec& mixtral = catalog("mixtral-8x7b");
  const double total = model::count_params(mixtral).total;
  const double routed = 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0; // layers x experts x SwiGLU's 3 d x f matrices
  model::ParallelLayout folded;
  folded.tensor = 2;
  folded.sequence_parallel = true;
  folded.data = 4;
  folded.expert = 8;
  folded.expert_tensor = 1;
  folded.stage_layers = {mixtral.layers};
  const auto f = model::stage_footprint(mixtral, folded, 0, 1, 4096, gpu, traffic, plan);
  const double dense_per_gpu = (total - routed) / 2.0, experts_per_gpu = routed / 8.0;
  CHECK(f.weight_bytes == Approx(2.0 * (dense_per_gpu + experts_per_gpu)).epsilon(1e-12));
  CHECK(f.optimizer_bytes == Approx(12.0 * (dense_per_gpu / 4.0 + experts_per_gpu)).epsilon(1e-12));
  model::ParallelLayout split = folded; // the same degrees, experts split over TP: half the expert bytes
  split.expert = 4;
  split.expert_tensor = 0;
  const auto g = model::stage_footprint(mixtral, split, 0, 1, 4096, gpu, traffic, plan);
  CHECK(g.weight_bytes == Approx(2.0 * (dense_per_gpu + routed / 4.0 / 2.0)).epsilon(1e-12));
}

TEST_CASE("FP8: a linear layer's saved input is its FP8 copy, 1 byte a value (Transformer Engine)") {
  // Per token and layer, 1 byte less for each value of: the QKV input (h), the projection input (h),
  // the first FFN GEMM's input (h) and the second's (the FFN width f). Llama 3 8B: 3 x 4096 + 14336.
  const model::ArchitectureSpec& llama = catalog("llama3-8b");
  const double bf16 = model::activation_bytes_per_layer(llama, 0, 1.0, model::Recompute::Selective);
  const double fp8 = model::activation_bytes_per_layer(llama, 0, 1.0, model::Recompute::Selective, true);
  CHECK(bf16 - fp8 == Approx(3.0 * 4096 + 14336).epsilon(1e-12));
  // Mixtral 8x7B: QKV and projection inputs (2 h), each of the top-2 experts' copy of the input (h)
  // and second GEMM's input (its width 14336): 2 x 4096 + 2 x (4096 + 14336).
  const model::ArchitectureSpec& mixtral = catalog("mixtral-8x7b");
  CHECK(model::activation_bytes_per_layer(mixtral, 0, 1.0, model::Recompute::Selective) -
            model::activation_bytes_per_layer(mixtral, 0, 1.0, model::Recompute::Selective, true) ==
        Approx(2.0 * 4096 + 2.0 * (4096 + 14336)).epsilon(1e-12));
  // Full recompute keeps the layer input only: unchanged.
  CHECK(model::activation_bytes_per_layer(llama, 0, 1.0, model::Recompute::Full, true) ==
        model::activation_bytes_per_layer(llama, 0, 1.0, model::Recompute::Full));
  // The footprint of an FP8 plan stores that: Llama 3 8B on one stage of 8 GPUs (TP 8 with SP), one
  // micro-batch of 8192 tokens in flight: 32 layers x 8192 x (3 h + f) / 8 less.
  const model::GpuSpec& gpu = *model::GpuCatalog::builtin().find("H100-SXM");
  const model::TrafficConstants traffic{};
  model::TrainingPlan plan;
  model::ParallelLayout tp8;
  tp8.tensor = 8;
  tp8.sequence_parallel = true;
  tp8.stage_layers = {llama.layers};
  const auto b = model::stage_footprint(llama, tp8, 0, 1, 8192, gpu, traffic, plan);
  plan.fp8 = true;
  const auto f = model::stage_footprint(llama, tp8, 0, 1, 8192, gpu, traffic, plan);
  CHECK(b.activation_bytes - f.activation_bytes == Approx(32.0 * 8192 * (3.0 * 4096 + 14336) / 8.0).epsilon(1e-9));
}

TEST_CASE("architecture: DeepSeek-V3's multi-head latent attention, by hand") {
  const model::ArchitectureSpec& m = *model::ModelCatalog::builtin().find("deepseek-v3");
  const double d = 7168, h = 128, q = 1536, kv = 512, nope = 128, rope = 64, v = 128, s = 4096;
  // Q: d -> q latent -> heads x (nope + rope); K, V: d -> kv latent (+ one shared rope key) -> heads x
  // (nope + v); output: heads x v -> d; an RMSNorm on each latent.
  const double qkv = d * q + q * h * (nope + rope) + d * (kv + rope) + kv * h * (nope + v);
  const double out = h * v * d;
  const model::ParamCounts p = model::count_params(m);
  CHECK(p.attention == qkv + out + q + kv);
  CHECK(qkv + out + q + kv == 187107328.0);
  const model::LayerFlops f = model::layer_forward_flops(m, 0);
  CHECK(f.qkv == 2 * qkv);
  CHECK(f.projection == 2 * out);
  CHECK(f.attention_core == 0.5 * 2 * s * h * (nope + rope + v)); // causal: half of QK^T and A V
  // K and V together, per token, for context parallelism's ring: heads x (nope + rope + v).
  CHECK(2 * model::kv_width(m) == h * (nope + rope + v));
  // Active parameters: 58 MoE layers of the router and 8 + 1 experts, 3 dense, attention, embeddings.
  const double expert = 3 * d * 2048;
  const double active = 61 * (qkv + out + q + kv + 2 * d) + 3 * 3 * d * 18432 + 58 * (d * 256 + 9 * expert) +
                        2 * 129280 * d + d;
  CHECK(p.active == Approx(active).epsilon(1e-12));
}

TEST_CASE("architecture: a multi-token prediction module, by hand (DeepSeek-V3's one)") {
  model::ArchitectureSpec m = *model::ModelCatalog::builtin().find("deepseek-v3");
  const model::ParamCounts main = model::count_params(m);
  m.mtp_layers = 1;
  const model::ParamCounts p = model::count_params(m);
  const double d = 7168, V = 129280;
  // Its layer as the last one (MoE), two RMSNorms and the [h; e] 2d -> d projection; the embedding
  // and LM head are the main model's. DeepSeek states 11.5B for it (README_WEIGHTS.md).
  const double module = main.attention + main.norms_per_layer + main.moe_ffn + 2 * d + 2 * d * d;
  CHECK(p.mtp_module == module);
  CHECK(module == Approx(11.5e9).epsilon(0.01));
  CHECK(p.total == main.total); // the model's stated size leaves it out
  CHECK(p.trained == main.total + module);
  CHECK(model::model_layers(m) == 62);
  CHECK(model::is_moe_layer(m, 61));
  // Its FLOPs: the last layer's, the projection and the LM head's second pass; in training 3x forward.
  const model::LayerFlops last = model::layer_forward_flops(m, 60), mtp = model::layer_forward_flops(m, 61);
  CHECK(mtp.total() == Approx(last.total() + 2 * 2 * d * d + 2 * d * V).epsilon(1e-14));
  model::ArchitectureSpec without = m;
  without.mtp_layers = 0;
  CHECK(model::training_flops_per_token(m, model::Recompute::None) ==
        Approx(model::training_flops_per_token(without, model::Recompute::None) + 3 * mtp.total()).epsilon(1e-14));
}
