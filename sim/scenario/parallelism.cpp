#include "parallelism.hpp"

#include "model/input_error.hpp"
#include "model/seed_tables.hpp"

#include <numeric>
#include <set>

namespace memwall::sim {

using model::Axis;
using model::InputNode;

namespace {

std::string n(long long v) { return std::to_string(v); }

std::array<Axis, model::kAxes> parse_placement(const InputNode& node) {
  std::array<Axis, model::kAxes> order{};
  const auto items = node.elements();
  if (items.size() != size_t(model::kAxes))
    node.fail("placement lists the five axes innermost first, each once: [tensor, context, expert, data, pipeline]");
  std::set<std::string> seen;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string axis = items[i].as_one_of({"tensor", "context", "expert", "data", "pipeline"});
    if (!seen.insert(axis).second)
      items[i].fail("axis '" + axis + "' is listed twice");
    order[i] = axis == "tensor"    ? Axis::Tensor
               : axis == "context" ? Axis::Context
               : axis == "expert"  ? Axis::Expert
               : axis == "data"    ? Axis::Data
                                   : Axis::Pipeline;
  }
  return order;
}

// The batch given as sequences (`global_batch`, `micro_batch`), read; checked with the layout.
void read_sequence_batch(const InputNode& batch, const Scenario& s, LayoutInputs& in) {
  if (!batch.has("global_batch") && !batch.has("micro_batch"))
    return;
  in.global_batch = batch.child("global_batch").as_count(kMaxTokens, "sequences");
  in.micro_batch = batch.has("micro_batch") ? batch.child("micro_batch").as_count(kMaxTokens, "sequences") : 1;
  if (s.arch.seq_len <= 0)
    batch.fail("a batch in sequences needs model.seq_len");
}

// Layers per virtual stage: a list of counts, or Megatron-Core's layout string, whose 'E' and 'L'
// must stand where memwall puts the embedding and the loss (first and last virtual stage).
std::vector<long long> read_pipeline_layout(const InputNode& node, long long& mtp_layers) {
  std::vector<long long> layers;
  if (node.is_sequence()) {
    const auto items = node.elements();
    if (items.empty() || items.size() > size_t(kMaxLayers))
      node.fail("pipeline_layout lists layers per virtual stage: 1 to " + n(kMaxLayers) + " entries");
    for (const auto& item : items) {
      layers.push_back(item.as_non_negative_integer());
      if (layers.back() > kMaxLayers)
        item.fail("more than " + n(kMaxLayers) + " layers");
    }
    return layers;
  }
  const std::string text = node.as_string();
  if (text.size() > 1000)
    node.fail("a layout string of " + n(static_cast<long long>(text.size())) + " characters (at most 1,000)");
  try {
    const model::PipelineLayoutText parsed = model::parse_pipeline_layout(text);
    if (!parsed.embedding || !parsed.loss)
      node.fail("a layout string places the embedding ('E', first) and the loss ('L', last) explicitly");
    if (parsed.virtual_layers.size() > size_t(kMaxLayers))
      node.fail("more than " + n(kMaxLayers) + " virtual stages");
    mtp_layers = parsed.mtp;
    return parsed.virtual_layers;
  } catch (const std::invalid_argument& e) {
    node.fail(e.what());
  }
  return layers;
}

std::optional<LayoutProblem> problem(const char* key, std::string reason) {
  return LayoutProblem{key, std::move(reason)};
}

} // namespace

std::optional<LayoutProblem> check_layout(model::ParallelLayout& l, const LayoutInputs& in, long long* microbatches) {
  const model::ArchitectureSpec& m = *in.arch;
  const long long model_ranks = l.tensor * l.pipeline * l.context;
  if (in.gpus % model_ranks != 0)
    return problem("parallelism", "tensor " + n(l.tensor) + " x pipeline " + n(l.pipeline) + " x context " +
                                      n(l.context) + " = " + n(model_ranks) + " does not divide the cluster's " +
                                      n(in.gpus) + " GPUs");
  l.data = in.gpus / model_ranks;
  // TP splits attention heads, key/value heads and the FFN's inner width over its GPUs (Megatron-LM's
  // column- and row-parallel layers): each must divide.
  if (l.tensor > 1) {
    const long long tp = l.tensor;
    if (m.hidden % tp != 0)
      return problem("parallelism.tensor", "tensor " + n(tp) + " does not divide the hidden size " + n(m.hidden));
    if (m.heads > 0 && m.heads % tp != 0)
      return problem("parallelism.tensor",
                     "tensor " + n(tp) + " does not divide the " + n(m.heads) + " attention heads");
    if (m.heads > 0 && model::kv_heads_of(m) % tp != 0)
      return problem("parallelism.tensor", "tensor " + n(tp) + " does not divide the " +
                                               n(model::kv_heads_of(m)) + " key/value heads");
    if (model::ffn_hidden_of(m) % tp != 0)
      return problem("parallelism.tensor",
                     "tensor " + n(tp) + " does not divide the FFN width " + n(model::ffn_hidden_of(m)));
  }
  if (l.sequence_parallel && l.tensor == 1)
    return problem("parallelism.sequence_parallel",
                   "sequence parallelism splits the tensor-parallel group's element-wise work: it needs tensor > 1");
  if (l.context > 1 && (m.seq_len <= 0 || m.seq_len % (2 * l.context) != 0))
    return problem("parallelism.context",
                   "context " + n(l.context) + " needs model.seq_len (" + n(m.seq_len) +
                       ") to split into 2 x context = " + n(2 * l.context) +
                       " equal chunks (each rank takes one from each end, balancing causal attention)");
  if (l.expert > 1) {
    if (m.moe.experts == 0)
      return problem("parallelism.expert", "expert parallelism needs an MoE model (model.moe)");
    if (m.moe.experts % l.expert != 0)
      return problem("parallelism.expert",
                     "expert " + n(l.expert) + " does not divide the " + n(m.moe.experts) + " experts");
    // Expert groups are consecutive (data-parallel replica, context rank) slots of a stage, context
    // innermost: Megatron-Core's folding of EP over CP x DP with expert_tensor_parallel = TP, and
    // over TP x CP x DP with expert_tensor_parallel = 1.
    const long long etp = l.expert_tensor_degree();
    if (etp != l.tensor && etp != 1)
      return problem("parallelism.expert_tensor_parallel",
                     "expert_tensor_parallel " + n(etp) + " with tensor " + n(l.tensor) +
                         ": memwall models 1 (whole experts, the expert group folded over the tensor-parallel "
                         "ranks) or the tensor degree (each expert split as the dense layers)");
    if (etp != l.tensor && l.expert % l.tensor != 0)
      return problem("parallelism.expert",
                     "expert " + n(l.expert) + " with expert_tensor_parallel 1 folds over whole tensor-parallel "
                         "groups: it must be a multiple of tensor " + n(l.tensor));
    if ((l.data * l.context) % l.expert_slots() != 0)
      return problem("parallelism.expert",
                     "expert " + n(l.expert) + " does not divide data " + n(l.data) + " x context " + n(l.context) +
                         " = " + n(l.data * l.context) +
                         (etp == l.tensor ? std::string(" (expert groups are made of data-parallel replicas and context "
                                                        "ranks; expert_tensor_parallel: 1 also folds them over the "
                                                        "tensor-parallel ranks)")
                                          : " in groups of expert / tensor = " + n(l.expert_slots()) + " slots"));
    if (m.moe.imbalance > double(l.expert))
      return problem("parallelism.expert",
                     model::format("moe.imbalance %g exceeds the expert-parallel degree %lld: the hot GPU cannot "
                                   "take more than all of its group's routed tokens",
                                   m.moe.imbalance, l.expert));
  }

  // Pipeline stages and their layers (a multi-token-prediction module's layer is one more, after the rest).
  const long long layers = model::model_layers(m);
  if (l.pipeline > layers)
    return problem("parallelism.pipeline",
                   "pipeline " + n(l.pipeline) + " has more stages than the model's " + n(layers) + " layers");
  const long long pieces = l.pipeline * l.virtual_stages; // virtual stages
  if (l.virtual_stages > 1) {
    if (l.pipeline == 1)
      return problem("parallelism.virtual_stages", "virtual stages interleave a pipeline: they need pipeline > 1");
    if (l.gpipe)
      return problem("parallelism.virtual_stages", "virtual stages run the interleaved 1F1B schedule, not gpipe");
  }
  const bool accounted = l.account_for_embedding || l.account_for_loss;
  const char* accounted_key =
      l.account_for_embedding ? "parallelism.account_for_embedding" : "parallelism.account_for_loss";
  if (!l.virtual_layers.empty() && !l.stage_layers.empty())
    return problem("parallelism.pipeline_layout", "give pipeline_layout or stage_layers, not both");
  if (accounted && (!l.virtual_layers.empty() || !l.stage_layers.empty()))
    return problem(accounted_key, "an explicit pipeline_layout or stage_layers places the embedding and the loss "
                                  "itself: drop account_for_embedding / account_for_loss");
  if (!l.virtual_layers.empty()) { // Megatron-Core's pipeline_model_parallel_layout
    if (static_cast<long long>(l.virtual_layers.size()) != pieces)
      return problem("parallelism.pipeline_layout",
                     "pipeline_layout lists " + n(static_cast<long long>(l.virtual_layers.size())) +
                         " virtual stages, pipeline " + n(l.pipeline) + " x virtual_stages " + n(l.virtual_stages) +
                         " is " + n(pieces));
    const long long sum = std::accumulate(l.virtual_layers.begin(), l.virtual_layers.end(), 0LL);
    if (sum != layers)
      return problem("parallelism.pipeline_layout",
                     "pipeline_layout places " + n(sum) + " layers, the model has " + n(layers) +
                         (m.mtp_layers > 0 ? " (" + n(m.layers) + " and " + n(m.mtp_layers) + " MTP)" : ""));
    if (l.layout_mtp_layers >= 0 && l.layout_mtp_layers != m.mtp_layers)
      return problem("parallelism.pipeline_layout", "pipeline_layout writes " + n(l.layout_mtp_layers) +
                                                        " multi-token prediction layers ('m'), the model has "
                                                        "mtp_layers " + n(m.mtp_layers));
  } else if (accounted) { // the embedding and the loss count as a layer each in an even split
    const long long total = layers + (l.account_for_embedding ? 1 : 0) + (l.account_for_loss ? 1 : 0);
    if (total % pieces != 0)
      return problem(accounted_key, n(layers) + " layers with the embedding and loss counted make " + n(total) +
                                        ", which pipeline " + n(l.pipeline) + " x virtual_stages " +
                                        n(l.virtual_stages) + " = " + n(pieces) +
                                        " virtual stages cannot split evenly: give pipeline_layout");
    l.virtual_layers.assign(size_t(pieces), total / pieces);
    l.virtual_layers.front() -= l.account_for_embedding ? 1 : 0;
    l.virtual_layers.back() -= l.account_for_loss ? 1 : 0;
  }
  if (!l.virtual_layers.empty()) {
    l.stage_layers.assign(size_t(l.pipeline), 0);
    for (long long piece = 0; piece < pieces; ++piece)
      l.stage_layers[size_t(piece % l.pipeline)] += l.virtual_layers[size_t(piece)];
  } else if (!l.stage_layers.empty()) { // given
    if (l.stage_layers.size() != size_t(l.pipeline))
      return problem("parallelism.stage_layers", "stage_layers lists " +
                                                     n(static_cast<long long>(l.stage_layers.size())) +
                                                     " stages, pipeline is " + n(l.pipeline));
    const long long sum = std::accumulate(l.stage_layers.begin(), l.stage_layers.end(), 0LL);
    if (sum != layers)
      return problem("parallelism.stage_layers",
                     "stage_layers add up to " + n(sum) + " layers, the model has " + n(layers));
  } else {
    l.stage_layers = model::default_stage_layers(layers, l.pipeline);
  }
  if (l.virtual_stages > 1 && l.virtual_layers.empty())
    for (size_t st = 0; st < l.stage_layers.size(); ++st)
      if (l.stage_layers[st] % l.virtual_stages != 0)
        return problem("parallelism.virtual_stages",
                       "stage " + n(static_cast<long long>(st)) + " holds " + n(l.stage_layers[st]) +
                           " layers, which " + n(l.virtual_stages) +
                           " virtual stages cannot split evenly (a virtual stage with no or part of a layer): "
                           "give pipeline_layout, or account_for_embedding / account_for_loss as Megatron-Core");
  // What the model-parallel engine does not do (yet): say so rather than simulate something else.
  // With a pipeline, FSDP (zero2 / zero3) runs as PyTorch's pipelining runs it: see stage_actor.cpp;
  // without one, zero3 gathers and reduces layer by layer beside the TP collectives (dp_sync.hpp).
  // Experts sharded by FSDP over their own data-parallel group are not modelled.
  // HSDP: shard groups of consecutive data-parallel ranks (with their context ranks: torchtitan's
  // dp_shard x cp mesh), also under a pipeline; not with experts (FSDP over the experts' own groups is
  // not simulated).
  if (in.shard_group > 0) {
    if (l.data % in.shard_group != 0 || in.shard_group > l.data)
      return problem("training.shard_group", "shard group " + n(in.shard_group) +
                                                 " does not divide the data-parallel degree " + n(l.data) +
                                                 " (HSDP replicates whole shard groups)");
    if (l.expert > 1)
      return problem("training.shard_group", "HSDP with expert parallelism is not simulated yet: shard over all "
                                             "data-parallel ranks (FSDP)");
  }
  if (l.model_parallel() && l.pipeline == 1 && l.expert > 1 &&
      (in.sharding == model::Sharding::Zero3 || in.sharding == model::Sharding::Zero2))
    return problem("parallelism", std::string("with expert parallelism and no pipeline, sharding ") +
                                      model::sharding_name(in.sharding) +
                                      " (FSDP's experts over their own data-parallel group) is not simulated yet: use "
                                      "none or zero1 (Megatron-Core's distributed optimizer), or a pipeline");

  // The batch in sequences: micro-batches per data-parallel replica follow from the layout.
  *microbatches = in.microbatches;
  if (in.global_batch > 0) {
    if (in.global_batch % (l.data * in.micro_batch) != 0)
      return problem("batch.global_batch", "global_batch " + n(in.global_batch) +
                                               " is not a multiple of data-parallel degree " + n(l.data) +
                                               " x micro_batch " + n(in.micro_batch) + " = " +
                                               n(l.data * in.micro_batch));
    *microbatches = in.global_batch / (l.data * in.micro_batch);
    if (*microbatches > kMaxMicrobatches)
      return problem("batch.global_batch", n(*microbatches) + " micro-batches per replica, over the limit of " +
                                               n(kMaxMicrobatches));
  }
  if (l.virtual_stages > 1 && *microbatches % l.pipeline != 0)
    return problem("parallelism.virtual_stages", "the interleaved schedule needs the micro-batches per replica (" +
                                                     n(*microbatches) + ") to be a multiple of pipeline " +
                                                     n(l.pipeline));
  return std::nullopt;
}

model::ParallelLayout read_layout(const InputNode& node) {
  node.check_keys({"tensor", "sequence_parallel", "tp_overlap", "moe_a2a_overlap", "pipeline", "stage_layers",
                   "virtual_stages",
                   "pipeline_layout", "account_for_embedding", "account_for_loss", "schedule", "context", "expert",
                   "expert_tensor_parallel", "placement"});
  model::ParallelLayout l;
  auto degree = [&](const char* key) { return node.has(key) ? node.child(key).as_count(kMaxGpus, "GPUs") : 1LL; };
  l.tensor = degree("tensor");
  l.pipeline = degree("pipeline");
  l.context = degree("context");
  l.expert = degree("expert");
  l.expert_tensor = node.has("expert_tensor_parallel") ? degree("expert_tensor_parallel") : 0;
  l.virtual_stages = node.has("virtual_stages") ? node.child("virtual_stages").as_count(kMaxLayers, "chunks") : 1;
  if (auto c = node.optional_child("sequence_parallel"))
    l.sequence_parallel = c->as_bool();
  if (auto c = node.optional_child("tp_overlap"))
    l.tp_overlap = c->as_bool();
  if (auto c = node.optional_child("moe_a2a_overlap"))
    l.moe_a2a_overlap = c->as_bool();
  if (auto c = node.optional_child("schedule"))
    l.gpipe = c->as_one_of({"gpipe", "1f1b"}) == "gpipe";
  if (auto c = node.optional_child("placement"))
    l.placement = parse_placement(*c);
  if (auto c = node.optional_child("stage_layers"))
    for (const auto& item : c->elements())
      l.stage_layers.push_back(item.as_count(kMaxLayers, "layers"));
  if (auto c = node.optional_child("account_for_embedding"))
    l.account_for_embedding = c->as_bool();
  if (auto c = node.optional_child("account_for_loss"))
    l.account_for_loss = c->as_bool();
  if (auto c = node.optional_child("pipeline_layout"))
    l.virtual_layers = read_pipeline_layout(*c, l.layout_mtp_layers);
  return l;
}

void parse_parallelism(const InputNode& root, Scenario& s) {
  model::ParallelLayout& l = s.layout;
  const InputNode batch = root.child("batch");
  LayoutInputs in;
  in.gpus = s.gpus;
  in.arch = &s.arch;
  in.sharding = s.training.sharding;
  in.microbatches = s.microbatches;
  in.shard_group = s.training.shard_group;
  read_sequence_batch(batch, s, in);
  std::optional<InputNode> node;
  if (root.has("parallelism")) {
    node = root.child("parallelism");
    l = read_layout(*node);
  }
  if (auto p = check_layout(l, in, &s.microbatches)) {
    // The key's own line: `parallelism.tensor`, `batch.global_batch`, ...
    const std::string& key = p->key;
    if (key.rfind("batch.", 0) == 0)
      batch.child(key.substr(6)).fail(p->reason);
    if (key.rfind("training.", 0) == 0)
      root.child("training").child(key.substr(9)).fail(p->reason);
    if (key == "parallelism")
      node->fail(p->reason);
    node->child(key.substr(std::string("parallelism.").size())).fail(p->reason);
  }
  // A capacity is applied per expert-parallel rank (model::expert_load): without expert parallelism
  // there is no per-rank load to cap, so it is refused there.
  if (s.arch.moe.capacity_factor > 0 && l.expert == 1) {
    const std::string reason = "capacity_factor is applied per expert-parallel rank: give parallelism.expert > 1 "
                               "(or leave it out: dropless)";
    if (root.has("model") && root.child("model").has("moe") && root.child("model").child("moe").has("capacity_factor"))
      root.child("model").child("moe").child("capacity_factor").fail(reason);
    root.child("model").fail(reason);
  }
  if (!node)
    l.stage_layers.clear(); // pure data parallelism has no pipeline stages to list (as before this check)
  if (in.global_batch > 0) {
    s.global_batch = in.global_batch;
    s.tokens_per_microbatch = double(in.micro_batch) * double(s.arch.seq_len);
  }
  // Keys a layout does not apply are refused or warned about where they stand, never dropped
  // (tests/check_bad_input.py lists each).
  auto warn = [&](const InputNode& at, const std::string& reason) {
    s.warnings.push_back(model::InputError(at.file(), at.line(), at.key_path(), reason).what());
  };
  if (node && l.tensor == 1 && node->has("tp_overlap"))
    warn(node->child("tp_overlap"), "there are no tensor-parallel collectives to overlap with tensor 1; not applied");
  if (node && l.expert == 1 && node->has("moe_a2a_overlap"))
    warn(node->child("moe_a2a_overlap"), "there are no expert all-to-alls to overlap with expert 1; not applied");
  if (node && l.pipeline == 1 && node->has("schedule"))
    warn(node->child("schedule"), "a schedule orders a pipeline's micro-batches: with pipeline 1 it is not applied");
  if (root.has("training") && root.child("training").has("bucket") && !s.training.overlap_bucketed)
    warn(root.child("training").child("bucket"),
         "buckets are what overlap: bucketed hands over; with overlap none the gradients go at once (not applied)");
  if (s.grouped_layout()) {
    const InputNode cluster = root.child("cluster");
    if (auto c = cluster.optional_child("collective")) {
      if (s.collective != "ring" && s.collective != "auto")
        c->fail("'" + s.collective + "' applies to pure data parallelism; with tensor, pipeline, context or expert parallelism "
                "or HSDP every collective runs as NCCL's rings over its channels (cluster.nccl); use ring");
      if (s.collective == "auto")
        warn(*c, "with tensor, pipeline, context or expert parallelism or HSDP every collective runs as a ring: auto "
                 "chooses ring");
    }
    if (auto c = cluster.optional_child("ring_order"))
      warn(*c, "with tensor, pipeline, context or expert parallelism the rings follow the layout's ranks "
               "(parallelism.placement); ring_order is not applied");
    const long long per_node = s.fabric.kind == "cluster" ? s.fabric.cluster.gpus_per_node : 0;
    if (per_node > 0 && l.tensor > per_node)
      s.warnings.push_back(s.file + ": tensor " + n(l.tensor) + " spans more than a node's " + n(per_node) +
                           " GPUs: its per-layer collectives cross the network");
  }
}

} // namespace memwall::sim
