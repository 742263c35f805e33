#include "sim/scenario/scenario.hpp"

#include "collectives/channels.hpp"
#include "collectives/choice.hpp"
#include "sim/scenario/parallelism.hpp"
#include "model/architecture_cost.hpp"
#include "model/step_closed_form.hpp"
#include "sim/scenario/power_keys.hpp"
#include "sim/scenario/reliability_keys.hpp"
#include "sim/scenario/training_keys.hpp"
#include "sim/pipeline/schedule.hpp"
#include "model/input_error.hpp"
#include "model/model_catalog.hpp"
#include "model/seed_tables.hpp"
#include "topologies/fabric_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

namespace memwall::sim {

using model::Dimension;
using model::InputNode;

namespace {

model::GpuSpec parse_gpu_ref(const InputNode& node, const model::GpuCatalog& catalog) {
  if (node.is_scalar()) {
    const std::string name = node.as_string();
    const model::GpuSpec* g = catalog.find(name);
    if (!g)
      node.fail("unknown GPU '" + name + "' (catalog " + model::GpuCatalog::default_path() +
                " has: " + catalog.names() + ")");
    return *g;
  }
  node.require_map();
  const model::GpuSpec* base = nullptr;
  if (auto like = node.optional_child("like")) {
    base = catalog.find(like->as_string());
    if (!base)
      like->fail("unknown GPU '" + like->as_string() + "' (have: " + catalog.names() + ")");
  }
  model::GpuSpec gpu = model::parse_gpu(node, base);
  if (auto stack = node.optional_child("stack")) {
    // A stack's efficiencies come from its profile as a whole: mixing them with this GPU's own
    // efficiency keys would leave neither the profile nor the keys as written.
    for (const char* key : {"gemm_efficiency", "attention_efficiency", "hbm_efficiency", "fp8_gemm_efficiency"})
      if (node.has(key))
        node.child(key).fail(std::string("'") + key + "' with 'stack': the stack carries its profile's "
                             "efficiencies; give one or the other");
    std::string why;
    const model::GpuSpec* profile = catalog.find_stack(stack->as_string(), why);
    if (!profile)
      stack->fail(why);
    gpu = model::carry_stack(gpu, *profile);
  }
  return gpu;
}

} // namespace

// The seed's keys alone give the seed's layer; `like:` starts from a catalog model, and any other
// architecture key (heads, ffn, moe, ...) describes a model from the seed's keys up.
model::ArchitectureSpec parse_model(const InputNode& node) {
  node.check_keys({"like", "hidden", "layers", "seq_len", "vocab", "heads", "kv_heads", "ffn", "ffn_hidden",
                   "tied_embeddings", "lm_head", "causal", "bias", "norm", "position", "max_positions", "moe",
                   "mla", "mtp_layers"});
  if (auto like = node.optional_child("like")) {
    const std::string name = like->as_string();
    const model::ArchitectureSpec* base = model::ModelCatalog::builtin().find(name);
    if (!base)
      like->fail("unknown model '" + name + "' (known: " + model::ModelCatalog::builtin().names() +
                 "; see memwall models)");
    model::ArchitectureSpec m = model::parse_architecture(node, base);
    m.name = name;
    return m;
  }
  model::TransformerShape s;
  s.hidden = node.child("hidden").as_count(kMaxHidden, "hidden size");
  s.layers = node.child("layers").as_count(kMaxLayers, "layers");
  if (auto c = node.optional_child("seq_len"))
    s.seq_len = c->as_non_negative_integer() > 0 ? c->as_count(kMaxTokens, "tokens") : 0;
  if (auto c = node.optional_child("vocab"))
    s.vocab = c->as_non_negative_integer() > 0 ? c->as_count(kMaxTokens, "vocabulary entries") : 0;
  model::ArchitectureSpec seed = model::seed_architecture(s.hidden, s.layers, s.seq_len, s.vocab);
  for (const char* key : {"heads", "kv_heads", "ffn", "ffn_hidden", "tied_embeddings", "lm_head", "causal", "bias",
                          "norm", "position", "max_positions", "moe", "mla", "mtp_layers"})
    if (node.has(key)) {
      model::ArchitectureSpec m = model::parse_architecture(node, &seed);
      m.name = "custom";
      // The seed's two embedding tables stay unless the scenario says how they are tied.
      m.seed_embeddings = !node.has("tied_embeddings") && !node.has("position");
      return m;
    }
  return seed;
}

namespace {

model::TrafficConstants parse_traffic(const InputNode& node) {
  node.check_keys({"b_w", "a", "a_store", "b_opt", "b_ar", "l2_frac"});
  model::TrafficConstants t;
  auto read = [&](const char* key, double& field) {
    if (auto c = node.optional_child(key))
      field = c->as_non_negative_number();
  };
  read("b_w", t.b_w_bytes_per_param);
  read("a", t.a_bytes_per_token_per_d);
  read("a_store", t.a_store_bytes_per_token_per_d);
  read("b_opt", t.b_opt_bytes_per_param);
  read("b_ar", t.b_ar_bytes_per_param);
  if (auto c = node.optional_child("l2_frac"))
    t.l2_fraction = c->as_fraction();
  return t;
}

std::vector<Scenario::LinkEvent> parse_link_events(const InputNode& node,
                                                   const topologies::FabricGraph& graph) {
  std::vector<std::pair<Scenario::LinkEvent, InputNode>> events;
  for (const auto& item : node.elements()) {
    item.check_keys({"at", "link", "bandwidth", "down"});
    Scenario::LinkEvent e;
    e.at_s = item.child("at").as_non_negative_quantity(Dimension::Time);
    const InputNode link = item.child("link");
    e.link = link.as_string();
    bool known = false;
    for (auto [edge, end] = boost::edges(graph); edge != end && !known; ++edge)
      known = graph[*edge].name == e.link;
    if (!known)
      link.fail("no link '" + e.link + "' in this fabric (memwall topo --dot lists them)");
    if (auto b = item.optional_child("bandwidth"))
      e.bytes_per_s = b->as_positive_quantity(Dimension::Bandwidth);
    if (auto d = item.optional_child("down"))
      e.down = d->as_bool();
    if (e.down == (e.bytes_per_s > 0))
      item.fail("give either 'bandwidth' (a new bandwidth) or 'down: true'");
    events.emplace_back(e, item);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.first.at_s < b.first.at_s; });
  std::map<std::string, double> down_at_s;
  std::vector<Scenario::LinkEvent> sorted;
  for (const auto& [e, item] : events) {
    if (auto d = down_at_s.find(e.link); d != down_at_s.end())
      item.fail("link '" + e.link + "' is down from t = " + model::format("%g", d->second) +
                " s on; a link that went down does not come back (not modelled)");
    if (e.down)
      down_at_s[e.link] = e.at_s;
    sorted.push_back(e);
  }
  return sorted;
}

} // namespace

std::vector<double> gpu_speed_factors(const Scenario& s) {
  std::vector<double> factors(static_cast<size_t>(s.gpus), 1.0);
  if (!s.speed_distribution.empty()) {
    std::mt19937_64 random(s.speed_seed);
    std::normal_distribution<double> normal(s.speed_mean, s.speed_spread);
    std::uniform_real_distribution<double> uniform(s.speed_mean - s.speed_spread,
                                                   s.speed_mean + s.speed_spread);
    for (double& f : factors)
      f = s.speed_distribution == "normal" ? normal(random) : uniform(random);
  }
  for (const auto& [rank, speed] : s.gpu_speed)
    factors[static_cast<size_t>(rank)] = speed;
  for (double& f : factors)
    f = std::clamp(f, 0.05, 2.0);
  return factors;
}

namespace {

// The NCCL communicators a GPU of the layout joins: one per parallel group of more than one GPU
// (tensor; data x context, the gradients'; context, the key-value ring's; pipeline; expert).
long long communicators_of(const Scenario& s) {
  const model::ParallelLayout& l = s.layout;
  if (!s.grouped_layout())
    return s.gpus > 1 ? 1 : 0;
  long long n = 0;
  // HSDP: a shard group's and a replica group's in place of the data-parallel group's.
  const long long shard = s.training.shard_degree(l.data, l.context);
  const long long replicas = l.data * l.context / shard;
  for (long long degree : {l.tensor, shard, replicas, l.context, l.pipeline, l.expert})
    n += degree > 1 ? 1 : 0;
  return n;
}

} // namespace

model::MemoryFootprint stage_memory(const Scenario& s, long long stage) {
  const model::ParallelLayout& l = s.layout;
  const auto kind = l.gpipe ? pipeline::ScheduleKind::GPipe : pipeline::ScheduleKind::OneFOneB;
  const long long in_flight =
      pipeline::peak_in_flight(pipeline::stage_order(kind, l.pipeline, stage, s.microbatches, l.virtual_stages));
  // A context-parallel GPU holds 1 / c of each sequence's tokens.
  return model::with_runtime_reserve(model::stage_footprint(architecture_of(s), l, stage, in_flight,
                                                            s.tokens_per_microbatch / double(l.context), s.gpu,
                                                            s.traffic, s.training),
                                     communicators_of(s));
}

model::MemoryFootprint scenario_footprint(const Scenario& s) {
  if (s.grouped_layout()) { // the stage that needs the most
    model::MemoryFootprint worst = stage_memory(s, 0);
    for (long long stage = 1; stage < s.layout.pipeline; ++stage)
      if (const model::MemoryFootprint f = stage_memory(s, stage); f.total_bytes > worst.total_bytes)
        worst = f;
    return worst;
  }
  return model::with_runtime_reserve(
      model::memory_footprint(architecture_of(s), s.tokens_per_microbatch, s.gpu, s.traffic, s.training, s.gpus),
      communicators_of(s));
}

void check_memory(const Scenario& s, bool allow_oom) {
  const model::MemoryFootprint f = scenario_footprint(s);
  if (!f.fits() && !allow_oom && !s.allow_oom)
    throw model::InputError(s.file, s.line, "",
                            "the plan does not fit in memory: " + f.describe() + " on " + s.gpu.name +
                                " (sharding " + model::sharding_name(s.training.sharding) +
                                "); set allow_oom: true or pass --allow-oom to run it anyway");
}

Scenario parse_scenario(const InputNode& root, const model::GpuCatalog& catalog, FabricMemo* memo,
                        const SharedFabric* shared) {
  // A plan or a sweep given to `run` or `validate`: say which command takes it.
  if (root.is_map()) {
    for (const char* key : {"base", "fabrics", "search"})
      if (root.has(key))
        root.child(key).fail("this is a plan file (base, fabrics, search): run it with `memwall plan " +
                             root.file() + "`");
    if (root.has("jobs"))
      root.child("jobs").fail("this is a jobs file (jobs:): run it with `memwall run " + root.file() + "`");
    for (const char* key : {"sweep", "zip", "scenario"})
      if (root.has(key))
        root.child(key).fail("this is a sweep file (scenario, sweep): run it with `memwall sweep " + root.file() + "`");
  }
  std::vector<std::string_view> keys{"name", "gpu", "model", "batch", "cluster", "traffic", "steps", "training",
                                        "parallelism", "allow_oom", "measured", "power", "run", "cost",
                                        "reliability", "checkpoint"};
  if (shared) {
    // A job's figures are its GPUs' and its step's: the facility, a run's budget and failures
    // belong to the whole cluster, which a jobs file does not project yet.
    for (const char* key : {"power", "run", "cost", "reliability", "checkpoint", "measured"})
      if (root.has(key))
        root.child(key).fail(std::string("'") + key + "' is not modelled for one job of several (a jobs file): "
                             "run the job alone for it");
    keys.insert(keys.end(), kJobKeys.begin(), kJobKeys.end());
  }
  root.check_keys(keys);
  Scenario s;
  s.file = root.file();
  s.name =
      root.has("name") ? root.child("name").as_string() : std::filesystem::path(root.file()).stem().string();
  s.gpu = parse_gpu_ref(root.child("gpu"), catalog);
  s.arch = parse_model(root.child("model"));
  s.shape = {s.arch.hidden, model::model_layers(s.arch), s.arch.seq_len, s.arch.vocab}; // with MTP modules
  if (s.gpu.gemm_tile.on()) {
    // The tile model knows a dense layer's GEMMs (and the LM head): not MLA's, not the experts'.
    if (s.gpu.sms <= 0)
      root.child("gpu").fail("the stack's gemm_tile needs " + s.gpu.name + "'s SM count (sms), which the catalog lacks");
    if (s.arch.mla.on() || s.arch.moe.experts > 0)
      root.child("gpu").fail("the GEMM tile model (gemm_tile) covers dense layers; this model's " +
                             std::string(s.arch.mla.on() ? "MLA attention" : "experts") + " are not modelled with it");
  }
  const InputNode batch = root.child("batch");
  batch.check_keys({"tokens_per_microbatch", "microbatches", "global_batch", "micro_batch"});
  if (batch.has("global_batch") || batch.has("micro_batch")) { // sequences: resolved with the layout
    for (const char* key : {"tokens_per_microbatch", "microbatches"})
      if (batch.has(key))
        batch.child(key).fail(std::string("give the batch either as global_batch and micro_batch (sequences) or as "
                                          "tokens_per_microbatch and microbatches, not both; '") + key + "' with global_batch");
  } else {
    s.tokens_per_microbatch = double(batch.child("tokens_per_microbatch").as_count(kMaxTokens, "tokens"));
    if (auto c = batch.optional_child("microbatches"))
      s.microbatches = c->as_count(kMaxMicrobatches, "micro-batches");
  }
  const InputNode cluster = root.child("cluster");
  if (shared && cluster.has("link_events"))
    cluster.child("link_events").fail("link events with several jobs are not modelled (give them to one job run alone)");
  if (shared && cluster.has("fabric") && !shared->replace_own)
    cluster.child("fabric").fail("a job runs on the jobs file's fabric (its top-level cluster.fabric); remove this one");
  cluster.check_keys(
      {"gpus", "fabric", "collective", "ring_order", "nccl", "stragglers", "speed_distribution", "link_events"});
  s.gpus = cluster.child("gpus").as_count(kMaxGpus, "GPUs");
  if (auto c = cluster.optional_child("collective")) {
    s.collective = c->as_string();
    if (s.collective != "ring" && s.collective != "hierarchical" && s.collective != "tree" &&
        s.collective != "halving-doubling" && s.collective != "nvls" && s.collective != "auto")
      c->fail("unknown collective '" + s.collective + "' (known: " + collectives::kCollectiveNames + ")");
    if (s.collective == "halving-doubling" && !collectives::is_power_of_two(s.gpus))
      c->fail("halving-doubling needs a power-of-two GPU count, the cluster has " + std::to_string(s.gpus));
  }
  if (auto c = cluster.optional_child("stragglers"))
    for (const auto& item : c->elements()) {
      item.check_keys({"gpu", "speed"});
      const InputNode gpu = item.child("gpu");
      const long long rank = gpu.as_non_negative_integer();
      if (rank >= s.gpus)
        gpu.fail("GPU " + std::to_string(rank) + " does not exist (the cluster has " +
                 std::to_string(s.gpus) + ")");
      const double speed = item.child("speed").as_positive_number();
      if (!s.gpu_speed.emplace(rank, speed).second)
        gpu.fail("GPU " + std::to_string(rank) + " is listed twice");
    }
  if (auto c = cluster.optional_child("speed_distribution")) {
    c->check_keys({"kind", "mean", "stddev", "half_width", "seed"});
    s.speed_distribution = c->child("kind").as_one_of({"normal", "uniform"});
    if (auto m = c->optional_child("mean"))
      s.speed_mean = m->as_positive_number();
    const char* spread = s.speed_distribution == "normal" ? "stddev" : "half_width";
    s.speed_spread = c->child(spread).as_non_negative_number();
    s.speed_seed = static_cast<unsigned long long>(c->child("seed").as_non_negative_integer());
  }
  if (auto c = cluster.optional_child("ring_order"))
    s.ring_order = c->as_one_of({"topology", "rank"});
  std::string memo_key;
  if (memo && cluster.has("fabric") && !cluster.has("link_events")) {
    YAML::Emitter text;
    text << YAML::Flow << cluster.child("fabric").yaml();
    memo_key = std::string(text.c_str()) + "\n" + std::filesystem::path(root.file()).parent_path().string() + "\n" +
               std::to_string(s.gpus);
  }
  const FabricMemo::Entry* known = nullptr;
  if (!memo_key.empty())
    if (auto hit = memo->entries.find(memo_key); hit != memo->entries.end())
      known = &hit->second;
  if (shared) {
    s.fabric = shared->fabric;
    s.inventory = shared->inventory;
    if (cluster.has("fabric"))
      s.warnings.push_back(s.file + ": cluster.fabric is replaced by the jobs file's fabric");
  } else if (known) { // a relative fabric path resolves from the file's folder: part of the key
    s.fabric = known->fabric;
    s.inventory = known->inventory;
  } else if (auto c = cluster.optional_child("fabric")) {
    s.fabric = topologies::parse_fabric(*c);
    const auto graph =
        topologies::build_fabric_graph(s.fabric, s.gpus); // validates ranks and connectivity now
    if (auto events = cluster.optional_child("link_events"))
      s.link_events = parse_link_events(*events, graph);
    s.inventory = fabric_inventory(graph, s.gpus);
    if (!memo_key.empty())
      memo->entries.emplace(memo_key, FabricMemo::Entry{s.fabric, s.inventory});
  } else if (s.gpus > 1) {
    cluster.fail("missing required key 'fabric' (needed when gpus > 1)");
  } else {
    s.fabric.link_bytes_per_s = s.gpu.ib_bytes_per_s; // unused by a single GPU
  }
  if (auto c = cluster.optional_child("collective"); c && s.collective == "nvls") {
    const bool one_domain = s.fabric.kind == "nvlink-node" ||
                            (s.fabric.kind == "cluster" && s.gpus <= s.fabric.cluster.gpus_per_node);
    if (!(s.fabric.nvls_efficiency > 0) || !one_domain)
      c->fail(!(s.fabric.nvls_efficiency > 0)
                  ? "nvls needs NVSwitches that reduce: this fabric declares no NVLink SHARP (nvlink: {sharp: true})"
                  : "nvls reduces inside one NVLink domain; " + std::to_string(s.gpus) +
                        " GPUs span several servers of this fabric (NVLS across servers is not modelled)");
  }
  s.channels = collectives::default_channels(s.fabric);
  if (auto c = cluster.optional_child("nccl")) {
    c->check_keys({"channels"});
    if (auto channels = c->optional_child("channels"))
      s.channels = channels->as_count(collectives::kMaxChannels, "channels");
  }
  if (auto c = root.optional_child("traffic"))
    s.traffic = parse_traffic(*c);
  if (auto c = root.optional_child("steps"))
    s.steps = c->as_count(kMaxSteps, "steps");
  if (auto c = root.optional_child("training")) {
    s.training = parse_training(*c);
    if (s.training.fp8 && s.gpu.peak_fp8_flops_per_s <= 0)
      c->child("precision").fail(s.gpu.name + " has no FP8 tensor rate (the catalog's peak_fp8); precision: bf16 "
                                 "or a GPU with FP8 (memwall gpus)");
    if (auto r = c->optional_child("recompute_modules"))
      check_recompute_modules(*r, architecture_of(s));
  }
  if (auto c = root.optional_child("allow_oom"))
    s.allow_oom = c->as_bool();
  if (auto c = root.optional_child("measured")) {
    c->check_keys({"tokens_per_s_per_gpu", "node_power_peak", "node_power_mean", "peak_memory_allocated",
                   "peak_memory_reserved", "memory_stage", "source"});
    if (!c->has("tokens_per_s_per_gpu") && !c->has("node_power_peak") && !c->has("node_power_mean") &&
        !c->has("peak_memory_allocated") && !c->has("peak_memory_reserved"))
      c->fail("a measured: block names what was measured: tokens_per_s_per_gpu, node_power_peak, "
              "node_power_mean, peak_memory_allocated or peak_memory_reserved");
    if (c->has("peak_memory_allocated") && c->has("peak_memory_reserved"))
      c->child("peak_memory_reserved").fail("one peak per scenario: allocated or reserved, as the source logs it");
    for (const char* kind : {"peak_memory_allocated", "peak_memory_reserved"})
      if (auto v = c->optional_child(kind)) {
        s.measured_peak_memory_bytes = v->as_positive_quantity(model::Dimension::Bytes);
        s.measured_memory_kind = std::string(kind).substr(12);
      }
    if (auto v = c->optional_child("memory_stage")) { // resolved against the layout below
      if (s.measured_memory_kind.empty())
        v->fail("memory_stage says where a peak_memory_allocated or peak_memory_reserved was logged");
      s.measured_memory_stage = v->as_one_of({"first", "last", "worst"}) == "first" ? 0
                                : v->as_string() == "last"                         ? -2
                                                                                   : -1;
    }
    if (auto v = c->optional_child("tokens_per_s_per_gpu"))
      s.measured_tokens_per_s_per_gpu = v->as_positive_number();
    if (auto v = c->optional_child("node_power_peak"))
      s.measured_node_power_peak_w = v->as_positive_quantity(model::Dimension::Power);
    if (auto v = c->optional_child("node_power_mean"))
      s.measured_node_power_mean_w = v->as_positive_quantity(model::Dimension::Power);
    s.measured_source = c->child("source").as_string();
  }
  parse_power_keys(root, s);
  s.line = root.line();
  parse_parallelism(root, s);
  if (s.measured_memory_stage == -2) // the last pipeline stage
    s.measured_memory_stage = s.layout.pipeline - 1;
  parse_reliability_keys(root, s);
  // The work, estimated before anything is built: GPU phases the simulation would run.
  // (A pipeline stage runs its own layers only.)
  const double phases = double(s.gpus) * double(s.steps) * double(s.microbatches) * double(s.shape.layers) /
                        double(s.layout.pipeline) * 4.0;
  if (phases > kMaxSimulatedPhases)
    root.fail(model::format("the run would simulate %.3g GPU phases (gpus x steps x microbatches x layers / "
                            "pipeline x 4), "
                            "over the limit of %.3g (see docs/reference.md, Input limits)",
                            phases, kMaxSimulatedPhases));
  if (s.shape.seq_len > 0 && s.tokens_per_microbatch < double(s.shape.seq_len))
    s.warnings.push_back(model::format(
        "%s: batch.tokens_per_microbatch (%.0f) is less than model.seq_len (%lld): a micro-batch holds part of "
        "one sequence; attention is costed at the full context length for each of its tokens",
        s.file.c_str(), s.tokens_per_microbatch, static_cast<long long>(s.shape.seq_len)));
  return s;
}

double scenario_params(const Scenario& s) {
  const model::ArchitectureSpec arch = architecture_of(s);
  return model::is_seed_shaped(arch) ? model::total_params(s.shape) : model::count_params(arch).trained;
}

Scenario load_scenario(const std::string& path, const model::GpuCatalog& catalog) {
  std::string text = InputNode::read_text_file(path);
  Scenario s = parse_scenario(InputNode::load_string(text, path), catalog);
  s.yaml_text = std::move(text);
  return s;
}

std::vector<std::string> scenario_files(const std::string& path, std::vector<std::string>* warnings) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw model::InputError(path, 0, "", "no such file or directory");
  if (!fs::is_directory(path, ec))
    return {path};
  std::vector<std::string> files;
  std::vector<std::string> skipped;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const auto ext = entry.path().extension();
    if (ext != ".yaml" && ext != ".yml")
      continue;
    // A symlink loop, a dangling link, a FIFO or a folder named *.yaml is no scenario: skipped, and
    // said, so that a directory run never quietly covers fewer files than the user put there.
    std::error_code entry_ec;
    if (entry.is_regular_file(entry_ec))
      files.push_back(entry.path().string());
    else
      skipped.push_back(model::printable(entry.path().string(), 200) + ": skipped, not a regular file" +
                        (entry_ec ? " (" + entry_ec.message() + ")" : std::string()));
  }
  if (ec)
    throw model::InputError(path, 0, "", "cannot list the directory: " + ec.message());
  std::sort(files.begin(), files.end());
  std::sort(skipped.begin(), skipped.end());
  if (files.empty())
    throw model::InputError(path, 0, "", "the directory holds no .yaml scenario" +
                                             (skipped.empty() ? std::string() : " (" + skipped.front() + ")"));
  if (warnings)
    warnings->insert(warnings->end(), skipped.begin(), skipped.end());
  return files;
}

} // namespace memwall::sim
