#include "model_catalog.hpp"

#include <cstdlib>

#ifndef MEMWALL_DEFAULT_MODEL_CATALOG
#define MEMWALL_DEFAULT_MODEL_CATALOG "model/models.yaml"
#endif

namespace memwall::model {

namespace {

void parse_moe(const InputNode& node, MoeSpec& moe) {
  node.check_keys({"experts", "top_k", "expert_ffn_hidden", "shared_experts", "every", "first_dense", "imbalance",
                   "capacity_factor", "pad_to_capacity"});
  if (auto c = node.optional_child("capacity_factor")) { // Megatron-Core's moe_expert_capacity_factor
    moe.capacity_factor = c->as_positive_number();
    if (moe.capacity_factor > 1000)
      c->fail("a capacity factor is a multiple of the mean tokens per expert: at most 1000");
  }
  if (auto c = node.optional_child("pad_to_capacity")) {
    moe.pad_to_capacity = c->as_bool();
    if (moe.pad_to_capacity && moe.capacity_factor <= 0)
      c->fail("pad_to_capacity pads to the capacity: give capacity_factor too");
  }
  if (auto c = node.optional_child("imbalance")) {
    moe.imbalance = c->as_positive_number();
    if (moe.imbalance < 1)
      c->fail("imbalance is the busiest expert's tokens over the mean: at least 1");
  }
  if (auto c = node.optional_child("experts"))
    moe.experts = c->as_count(kMaxExperts, "experts");
  if (auto c = node.optional_child("top_k"))
    moe.top_k = c->as_count(kMaxExperts, "experts");
  if (auto c = node.optional_child("expert_ffn_hidden"))
    moe.expert_ffn_hidden = c->as_count(kMaxHidden * 64, "expert width");
  if (auto c = node.optional_child("shared_experts")) {
    moe.shared_experts = c->as_non_negative_integer();
    if (moe.shared_experts > kMaxExperts)
      c->fail("at most " + std::to_string(kMaxExperts) + " shared experts");
  }
  if (auto c = node.optional_child("every"))
    moe.every = c->as_count(kMaxLayers, "layers");
  if (auto c = node.optional_child("first_dense")) {
    moe.first_dense = c->as_non_negative_integer();
    if (moe.first_dense > kMaxLayers)
      c->fail("at most " + std::to_string(kMaxLayers) + " layers");
  }
}

// Consistency of the whole description, reported at the key that broke it (the one given here, or
// the model node when the fault came from the base it is `like`).
void check_architecture(const InputNode& node, const ArchitectureSpec& m) {
  auto at = [&](const char* key) -> InputNode {
    if (auto c = node.optional_child(key))
      return *c;
    return node;
  };
  auto moe_at = [&](const char* key) -> InputNode {
    if (auto moe = node.optional_child("moe"))
      if (auto c = moe->optional_child(key))
        return *c;
    return at("moe");
  };
  if (m.hidden <= 0)
    node.fail("missing required key 'hidden'");
  if (m.layers <= 0)
    node.fail("missing required key 'layers'");
  if (m.heads > 0 && m.hidden % m.heads != 0 && kv_heads_of(m) != m.heads)
    at("heads").fail("heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) +
                     ") for grouped-query attention");
  if (m.heads > m.hidden)
    at("heads").fail("more heads (" + std::to_string(m.heads) + ") than hidden (" + std::to_string(m.hidden) + ")");
  if (m.kv_heads > 0 && m.heads <= 0)
    at("kv_heads").fail("kv_heads needs heads");
  if (m.kv_heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0))
    at("kv_heads").fail("kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" +
                        std::to_string(m.heads) + ")");
  if (m.position == PositionKind::Learned && m.max_positions <= 0)
    at("position").fail("learned positions need max_positions");
  if (m.moe.experts > 0) {
    if (m.moe.top_k <= 0)
      moe_at("top_k").fail("an MoE layer needs top_k");
    if (m.moe.top_k > m.moe.experts)
      moe_at("top_k").fail("top_k (" + std::to_string(m.moe.top_k) + ") exceeds experts (" +
                           std::to_string(m.moe.experts) + ")");
    if (m.moe.expert_ffn_hidden <= 0)
      moe_at("expert_ffn_hidden").fail("an MoE layer needs expert_ffn_hidden");
    if (moe_layer_count(m) == 0)
      moe_at("first_dense").fail("no layer is an MoE layer (first_dense / every leave none)");
  } else if (m.moe.top_k > 0 || m.moe.shared_experts > 0) {
    moe_at("experts").fail("MoE keys without experts");
  }
}

} // namespace

ArchitectureSpec parse_architecture(const InputNode& node, const ArchitectureSpec* base) {
  node.check_keys({"name", "like", "source", "hidden", "layers", "heads", "kv_heads", "ffn", "ffn_hidden", "vocab",
                   "seq_len", "position", "max_positions", "tied_embeddings", "lm_head", "causal", "bias", "norm",
                   "moe", "mla", "mtp_layers", "published_params", "published_active_params"});
  ArchitectureSpec m = base ? *base : ArchitectureSpec{};
  if (base) { // an override describes another model: the base's published counts no longer apply
    m.published_params = 0;
    m.published_active_params = 0;
    m.source = "based on " + base->name;
  } else { // catalog models compute their LM head and count causal attention
    m.lm_head = true;
    m.causal = true;
  }
  if (auto c = node.optional_child("name"))
    m.name = c->as_string();
  else if (!base)
    node.fail("missing required key 'name'");
  if (auto c = node.optional_child("source"))
    m.source = c->as_string();
  auto count = [&](const char* key, long long limit, const char* what, long long& field) {
    if (auto c = node.optional_child(key))
      field = c->as_count(limit, what);
  };
  count("hidden", kMaxHidden, "hidden size", m.hidden);
  count("layers", kMaxLayers, "layers", m.layers);
  count("heads", kMaxHeads, "heads", m.heads);
  count("kv_heads", kMaxHeads, "heads", m.kv_heads);
  count("ffn_hidden", kMaxHidden * 64, "FFN width", m.ffn_hidden);
  count("vocab", kMaxVocab, "vocabulary", m.vocab);
  count("seq_len", kMaxSeqLen, "tokens", m.seq_len);
  count("max_positions", kMaxSeqLen, "positions", m.max_positions);
  if (auto c = node.optional_child("ffn"))
    m.ffn = c->as_one_of({"gelu", "swiglu"}) == "swiglu" ? FfnKind::SwiGlu : FfnKind::Gelu;
  if (auto c = node.optional_child("norm")) {
    const std::string n = c->as_one_of({"none", "layernorm", "rmsnorm"});
    m.norm = n == "layernorm" ? NormKind::LayerNorm : n == "rmsnorm" ? NormKind::RmsNorm : NormKind::None;
  }
  if (auto c = node.optional_child("position"))
    m.position = c->as_one_of({"none", "learned"}) == "learned" ? PositionKind::Learned : PositionKind::None;
  if (auto c = node.optional_child("tied_embeddings"))
    m.tied_embeddings = c->as_bool();
  if (auto c = node.optional_child("lm_head"))
    m.lm_head = c->as_bool();
  if (auto c = node.optional_child("causal"))
    m.causal = c->as_bool();
  if (auto c = node.optional_child("bias"))
    m.bias = c->as_bool();
  if (auto c = node.optional_child("moe"))
    parse_moe(*c, m.moe);
  if (auto c = node.optional_child("mla")) {
    c->check_keys({"q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_rope_head_dim", "v_head_dim"});
    for (const char* key : {"kv_lora_rank", "qk_head_dim", "v_head_dim"})
      if (!c->has(key))
        c->fail(std::string("multi-head latent attention needs ") + key);
    auto dim = [&](const char* key, long long& field) {
      if (auto v = c->optional_child(key))
        field = v->as_non_negative_integer() > 0 ? v->as_count(kMaxHidden, "dimensions") : 0;
    };
    dim("q_lora_rank", m.mla.q_lora_rank);
    m.mla.kv_lora_rank = c->child("kv_lora_rank").as_count(kMaxHidden, "dimensions");
    m.mla.qk_head_dim = c->child("qk_head_dim").as_count(kMaxHidden, "dimensions");
    dim("qk_rope_head_dim", m.mla.qk_rope_head_dim);
    m.mla.v_head_dim = c->child("v_head_dim").as_count(kMaxHidden, "dimensions");
    if (m.heads <= 0)
      c->fail("multi-head latent attention needs heads");
    if (m.kv_heads > 0 && m.kv_heads != m.heads)
      c->fail("multi-head latent attention has a key and value per head: drop kv_heads");
  }
  if (auto c = node.optional_child("mtp_layers")) {
    m.mtp_layers = c->as_non_negative_integer();
    if (m.mtp_layers > 8)
      c->fail("at most 8 multi-token prediction modules, got " + std::to_string(m.mtp_layers));
  }
  if (auto c = node.optional_child("published_params"))
    m.published_params = c->as_positive_number();
  if (auto c = node.optional_child("published_active_params"))
    m.published_active_params = c->as_positive_number();
  m.seed_embeddings = false;
  check_architecture(node, m);
  return m;
}

ModelCatalog ModelCatalog::load_file(const std::string& path) {
  return from_node(InputNode::load_file(path));
}

ModelCatalog ModelCatalog::from_node(const InputNode& root) {
  root.check_keys({"models"});
  ModelCatalog catalog;
  for (const auto& entry : root.child("models").elements()) {
    entry.require_map();
    if (entry.has("like"))
      entry.fail("'like' is for a scenario's model, not for catalog entries");
    ArchitectureSpec m = parse_architecture(entry, nullptr);
    if (catalog.find(m.name))
      entry.child("name").fail("duplicate model name '" + m.name + "'");
    catalog.models_.push_back(std::move(m));
  }
  if (catalog.models_.empty())
    root.child("models").fail("the catalog lists no model");
  return catalog;
}

const std::string& ModelCatalog::default_path() {
  static const std::string path = [] {
    const char* env = std::getenv("MEMWALL_MODEL_CATALOG");
    return std::string(env && *env ? env : MEMWALL_DEFAULT_MODEL_CATALOG);
  }();
  return path;
}

const ModelCatalog& ModelCatalog::builtin() {
  static const ModelCatalog catalog = load_file(default_path());
  return catalog;
}

const ArchitectureSpec* ModelCatalog::find(const std::string& name) const {
  for (const auto& m : models_)
    if (m.name == name)
      return &m;
  return nullptr;
}

std::string ModelCatalog::names() const {
  std::string out;
  for (const auto& m : models_) {
    if (!out.empty())
      out += ", ";
    out += m.name;
  }
  return out;
}

} // namespace memwall::model
