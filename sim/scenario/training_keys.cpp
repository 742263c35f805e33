#include "sim/scenario/training_keys.hpp"

#include "model/architecture_cost.hpp"
#include "model/seed_tables.hpp" // model::format
#include "sim/scenario/scenario.hpp"

#include <string>

namespace memwall::sim {

using model::Dimension;
using model::InputNode;

void check_recompute_modules(const InputNode& list, const model::ArchitectureSpec& arch) {
  bool dense = false;
  for (long long l = 0; l < model::model_layers(arch); ++l)
    dense = dense || !model::is_moe_layer(arch, l);
  const bool seed = model::is_seed_shaped(arch);
  for (const InputNode& item : list.elements()) {
    unsigned m = 0;
    model::parse_recompute_module(item.as_string(), &m);
    const char* missing = nullptr;
    if (seed && m != model::kRecomputeCoreAttn)
      missing = "the seed's layer (give the model's shape: norm, ffn, moe or mla keys, or like:)";
    else if (m == model::kRecomputeMlaUpProj && !arch.mla.on())
      missing = "a model without multi-head latent attention (model.mla)";
    else if (m == model::kRecomputeMoeAct && arch.moe.experts == 0)
      missing = "a model without experts";
    else if (m == model::kRecomputeSharedExperts && arch.moe.shared_experts == 0)
      missing = "a model without shared experts";
    else if (m == model::kRecomputeMlp && !dense)
      missing = "a model whose every layer is MoE";
    if (missing)
      item.fail(model::format("'%s' recomputes nothing on %s", item.as_string().c_str(), missing));
  }
}

model::TrainingPlan parse_training(const InputNode& node) {
  node.check_keys({"sharding", "activation_recompute", "recompute_every", "recompute_modules", "overlap", "bucket",
                   "precision", "fp8_params", "grad_reduce_in_fp32", "optimizer_dtypes", "shard_group"});
  model::TrainingPlan t;
  if (auto c = node.optional_child("sharding"))
    if (!model::parse_sharding(c->as_string(), &t.sharding))
      c->fail("expected none, zero1, zero2 or zero3, got '" + c->as_string() + "'");
  if (auto c = node.optional_child("activation_recompute")) { // none | selective | full (false / true)
    const std::string r = c->as_one_of({"none", "selective", "full", "false", "true"});
    t.activation_recompute = r == "full" || r == "true";
    t.selective_recompute = r == "selective";
  }
  if (auto c = node.optional_child("recompute_every")) {
    t.recompute_every = c->as_count(kMaxLayers, "layers");
    if (!t.activation_recompute)
      c->fail("recompute_every needs activation_recompute: full (it recomputes every k-th layer fully)");
  }
  if (auto c = node.optional_child("recompute_modules")) { // Megatron-Core's names; replaces the default
    if (!t.selective_recompute)
      c->fail("recompute_modules lists what selective recompute runs again: it needs activation_recompute: "
              "selective");
    t.recompute_modules = 0;
    for (const InputNode& item : c->elements()) {
      unsigned m = 0;
      if (item.as_string() == "moe")
        item.fail("recomputing the whole MoE layer (its dispatch and combine all-to-alls run again) is not "
                  "simulated: list moe_act and shared_experts instead");
      if (!model::parse_recompute_module(item.as_string(), &m))
        item.fail("unknown recompute module '" + item.as_string() +
                  "' (known: core_attn, layernorm, mla_up_proj, moe_act, mlp, shared_experts)");
      if (t.recompute_modules & m)
        item.fail(model::format("'%s' is listed twice", item.as_string().c_str()));
      t.recompute_modules |= m;
    }
    if (t.recompute_modules == 0)
      c->fail("an empty list recomputes nothing: use activation_recompute: none");
  }
  if (auto c = node.optional_child("precision"))
    t.fp8 = c->as_one_of({"bf16", "fp8"}) == "fp8";
  if (auto c = node.optional_child("fp8_params")) {
    t.fp8_params = c->as_bool();
    if (t.fp8_params && !t.fp8)
      c->fail("fp8_params keeps the weights in FP8: it needs precision: fp8");
  }
  if (auto c = node.optional_child("grad_reduce_in_fp32"))
    t.gradient_bytes = c->as_bool() ? 4.0 : 2.0;
  if (auto c = node.optional_child("optimizer_dtypes")) { // Megatron-Core's precision-aware optimizer
    c->check_keys({"main_params", "exp_avg", "exp_avg_sq"});
    auto bytes = [](const std::string& dtype) { return dtype == "fp32" ? 4.0 : dtype == "bf16" ? 2.0 : 0.0; };
    if (auto d = c->optional_child("main_params"))
      t.main_params_bytes = bytes(d->as_one_of({"fp32", "bf16", "none"}));
    if (auto d = c->optional_child("exp_avg"))
      t.exp_avg_bytes = bytes(d->as_one_of({"fp32", "bf16"}));
    if (auto d = c->optional_child("exp_avg_sq"))
      t.exp_avg_sq_bytes = bytes(d->as_one_of({"fp32", "bf16"}));
    if (t.fp8_params && t.main_params_bytes == 0)
      c->child("main_params").fail("with fp8_params the FP8 weights need a master copy to update: fp32 or bf16");
  }
  if (auto c = node.optional_child("overlap"))
    t.overlap_bucketed = c->as_one_of({"none", "bucketed"}) == "bucketed";
  if (auto c = node.optional_child("bucket"))
    t.bucket_bytes = c->as_positive_quantity(Dimension::Bytes);
  if (auto c = node.optional_child("shard_group")) { // HSDP; its fit to the layout: check_layout
    t.shard_group = c->as_count(kMaxGpus, "GPUs");
    if (t.sharding != model::Sharding::Zero3)
      c->fail("a shard group is FSDP's hybrid sharding (HSDP): it needs sharding: zero3");
    if (t.shard_group < 2)
      c->fail("a shard group of 1 shards nothing (each GPU would hold the whole model): use sharding none");
  }
  if (t.overlap_bucketed && t.sharding == model::Sharding::Zero2)
    node.fail(
        "overlap is modelled for sharding none and zero1 (DDP buckets) and zero3 (FSDP prefetch), not zero2");
  return t;
}

} // namespace memwall::sim
