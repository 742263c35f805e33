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

// TP splits attention heads, key/value heads and the FFN's inner width over its GPUs
// (Megatron-LM's column- and row-parallel layers): each must divide.
void check_tensor_split(const InputNode& key, const model::ArchitectureSpec& m, long long tp) {
  if (m.hidden % tp != 0)
    key.fail("tensor " + n(tp) + " does not divide the hidden size " + n(m.hidden));
  if (m.heads > 0 && m.heads % tp != 0)
    key.fail("tensor " + n(tp) + " does not divide the " + n(m.heads) + " attention heads");
  if (m.heads > 0 && model::kv_heads_of(m) % tp != 0)
    key.fail("tensor " + n(tp) + " does not divide the " + n(model::kv_heads_of(m)) + " key/value heads");
  if (model::ffn_hidden_of(m) % tp != 0)
    key.fail("tensor " + n(tp) + " does not divide the FFN width " + n(model::ffn_hidden_of(m)));
}

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

// The batch given as sequences: micro-batches per data-parallel replica follow from the layout.
void resolve_sequence_batch(const InputNode& batch, Scenario& s) {
  if (!batch.has("global_batch") && !batch.has("micro_batch"))
    return;
  const InputNode global = batch.child("global_batch");
  const long long global_batch = global.as_count(kMaxTokens, "sequences");
  const long long micro_batch =
      batch.has("micro_batch") ? batch.child("micro_batch").as_count(kMaxTokens, "sequences") : 1;
  if (s.arch.seq_len <= 0)
    batch.fail("a batch in sequences needs model.seq_len");
  const long long data = s.layout.data;
  if (global_batch % (data * micro_batch) != 0)
    global.fail("global_batch " + n(global_batch) + " is not a multiple of data-parallel degree " + n(data) +
                " x micro_batch " + n(micro_batch) + " = " + n(data * micro_batch));
  s.global_batch = global_batch;
  s.tokens_per_microbatch = double(micro_batch) * double(s.arch.seq_len);
  s.microbatches = global_batch / (data * micro_batch);
  if (s.microbatches > kMaxMicrobatches)
    global.fail(n(s.microbatches) + " micro-batches per replica, over the limit of " + n(kMaxMicrobatches));
}

} // namespace

void parse_parallelism(const InputNode& root, Scenario& s) {
  model::ParallelLayout& l = s.layout;
  const InputNode batch = root.child("batch");
  if (!root.has("parallelism")) {
    l.data = s.gpus;
    resolve_sequence_batch(batch, s);
    return;
  }
  const InputNode node = root.child("parallelism");
  node.check_keys({"tensor", "sequence_parallel", "tp_overlap", "pipeline", "stage_layers", "virtual_stages",
                   "schedule", "context", "expert", "placement"});
  auto degree = [&](const char* key) {
    return node.has(key) ? node.child(key).as_count(kMaxGpus, "GPUs") : 1LL;
  };
  l.tensor = degree("tensor");
  l.pipeline = degree("pipeline");
  l.context = degree("context");
  l.expert = degree("expert");
  l.virtual_stages = node.has("virtual_stages") ? node.child("virtual_stages").as_count(kMaxLayers, "chunks") : 1;
  if (auto c = node.optional_child("sequence_parallel"))
    l.sequence_parallel = c->as_bool();
  if (auto c = node.optional_child("tp_overlap"))
    l.tp_overlap = c->as_bool();
  if (auto c = node.optional_child("schedule"))
    l.gpipe = c->as_one_of({"gpipe", "1f1b"}) == "gpipe";
  if (auto c = node.optional_child("placement"))
    l.placement = parse_placement(*c);

  const long long model_ranks = l.tensor * l.pipeline * l.context;
  if (s.gpus % model_ranks != 0)
    node.fail("tensor " + n(l.tensor) + " x pipeline " + n(l.pipeline) + " x context " + n(l.context) + " = " +
              n(model_ranks) + " does not divide the cluster's " + n(s.gpus) + " GPUs");
  l.data = s.gpus / model_ranks;
  if (l.tensor > 1)
    check_tensor_split(node.child("tensor"), s.arch, l.tensor);
  if (l.sequence_parallel && l.tensor == 1)
    node.child("sequence_parallel").fail("sequence parallelism splits the tensor-parallel group's element-wise work: "
                                         "it needs tensor > 1");
  if (l.context > 1 && (s.arch.seq_len <= 0 || s.arch.seq_len % (2 * l.context) != 0))
    node.child("context").fail("context " + n(l.context) + " needs model.seq_len (" + n(s.arch.seq_len) +
                               ") to split into 2 x context = " + n(2 * l.context) +
                               " equal chunks (each rank takes one from each end, balancing causal attention)");
  if (l.expert > 1) {
    const InputNode key = node.child("expert");
    if (s.arch.moe.experts == 0)
      key.fail("expert parallelism needs an MoE model (model.moe)");
    if (s.arch.moe.experts % l.expert != 0)
      key.fail("expert " + n(l.expert) + " does not divide the " + n(s.arch.moe.experts) + " experts");
    if (l.data % l.expert != 0) // expert groups are carved out of the data-parallel replicas
      key.fail("expert " + n(l.expert) + " does not divide the data-parallel degree " + n(l.data) +
               " (gpus / (tensor x pipeline x context)); expert groups are made of data-parallel replicas");
    if (s.arch.moe.imbalance > double(l.expert))
      key.fail(model::format("moe.imbalance %g exceeds the expert-parallel degree %lld: the hot GPU cannot take "
                             "more than all of its group's routed tokens",
                             s.arch.moe.imbalance, l.expert));
  }

  // Pipeline stages and their layers.
  const long long layers = s.arch.layers;
  if (l.pipeline > layers)
    node.child("pipeline").fail("pipeline " + n(l.pipeline) + " has more stages than the model's " + n(layers) +
                                " layers");
  if (auto c = node.optional_child("stage_layers")) {
    l.stage_layers.clear();
    for (const auto& item : c->elements())
      l.stage_layers.push_back(item.as_count(kMaxLayers, "layers"));
    if (l.stage_layers.size() != size_t(l.pipeline))
      c->fail("stage_layers lists " + n(static_cast<long long>(l.stage_layers.size())) + " stages, pipeline is " +
              n(l.pipeline));
    const long long sum = std::accumulate(l.stage_layers.begin(), l.stage_layers.end(), 0LL);
    if (sum != layers)
      c->fail("stage_layers add up to " + n(sum) + " layers, the model has " + n(layers));
  } else {
    l.stage_layers = model::default_stage_layers(layers, l.pipeline);
  }
  if (l.virtual_stages > 1) {
    const InputNode key = node.child("virtual_stages");
    if (l.pipeline == 1)
      key.fail("virtual stages interleave a pipeline: they need pipeline > 1");
    if (l.gpipe)
      key.fail("virtual stages run the interleaved 1F1B schedule, not gpipe");
    for (size_t st = 0; st < l.stage_layers.size(); ++st)
      if (l.stage_layers[st] % l.virtual_stages != 0)
        key.fail("stage " + n(static_cast<long long>(st)) + " holds " + n(l.stage_layers[st]) + " layers, which " +
                 n(l.virtual_stages) + " virtual stages cannot split evenly (a virtual stage with no or part of a layer)");
  }

  // What the model-parallel engine does not do (yet): say so rather than simulate something else.
  if (l.model_parallel()) {
    if (!s.link_events.empty())
      root.child("cluster").child("link_events").fail("link events are simulated with data parallelism only, not with "
                                                      "tensor or pipeline parallelism");
    if (s.training.sharding == model::Sharding::Zero3 || s.training.sharding == model::Sharding::Zero2)
      node.fail(std::string("with tensor or pipeline parallelism, sharding ") +
                model::sharding_name(s.training.sharding) +
                " is not simulated yet: use none or zero1 (Megatron-LM's distributed optimizer)");
    if (s.training.overlap_bucketed)
      s.warnings.push_back(s.file + ": with tensor or pipeline parallelism the data-parallel gradient all-reduce runs "
                                    "after the pipeline flush (Megatron-LM 2021); overlap: bucketed is not applied");
    const long long per_node = s.fabric.kind == "cluster" ? s.fabric.cluster.gpus_per_node : 0;
    if (per_node > 0 && l.tensor > per_node)
      s.warnings.push_back(s.file + ": tensor " + n(l.tensor) + " spans more than a node's " + n(per_node) +
                           " GPUs: its per-layer collectives cross the network");
  }
  resolve_sequence_batch(batch, s);
  if (l.virtual_stages > 1 && s.microbatches % l.pipeline != 0)
    node.child("virtual_stages").fail("the interleaved schedule needs the micro-batches per replica (" +
                                      n(s.microbatches) + ") to be a multiple of pipeline " + n(l.pipeline));
}

} // namespace memwall::sim
