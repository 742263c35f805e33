#include "layout_precheck.hpp"

#include "model/training_plan.hpp"
#include "sim/scenario/scenario.hpp"

#include <string_view>

namespace memwall::plan {

using model::InputNode;

namespace {

// A searched value read as the loader reads that key.
void read_value(std::string_view key, const InputNode& node, bool& known, long long& number, bool& flag,
                model::Sharding& sharding) {
  known = true;
  if (key == "tensor" || key == "pipeline" || key == "context" || key == "expert")
    number = node.as_count(sim::kMaxGpus, "GPUs");
  else if (key == "virtual_stages")
    number = node.as_count(sim::kMaxLayers, "chunks");
  else if (key == "micro_batch")
    number = node.as_count(sim::kMaxTokens, "sequences");
  else if (key == "sequence_parallel")
    flag = node.as_bool();
  else if (key == "sharding")
    known = model::parse_sharding(node.as_string(), &sharding);
  else if (key != "activation_recompute") // recompute does not enter the layout's checks
    known = false;
}

} // namespace

LayoutPrecheck::LayoutPrecheck(const PlanSpec& spec) : spec_(spec) {
  values_.resize(spec.axes.size());
  bool searches_micro_batch = false;
  for (size_t a = 0; a < spec.axes.size(); ++a) {
    const std::string_view key = kSearchKeys[spec.axes[a].key].name;
    searches_micro_batch = searches_micro_batch || key == "micro_batch";
    for (const YAML::Node& v : spec.axes[a].values) {
      Value value;
      try {
        read_value(key, InputNode(v, spec.file, "search"), value.known, value.number, value.flag, value.sharding);
      } catch (const std::exception&) {
        value.known = false;
      }
      values_[a].push_back(value);
    }
  }
  try {
    const InputNode root(spec.scenario, spec.file, "");
    inputs_.gpus = root.child("cluster").child("gpus").as_count(sim::kMaxGpus, "GPUs");
    arch_ = sim::parse_model(root.child("model"));
    inputs_.arch = &arch_;
    if (auto t = root.optional_child("training"); t && t->has("sharding") &&
                                                 !model::parse_sharding(t->child("sharding").as_string(), &inputs_.sharding))
      return;
    const InputNode batch = root.child("batch");
    if (batch.has("global_batch")) {
      inputs_.global_batch = batch.child("global_batch").as_count(sim::kMaxTokens, "sequences");
      if (auto m = batch.optional_child("micro_batch"))
        inputs_.micro_batch = m->as_count(sim::kMaxTokens, "sequences");
      if (arch_.seq_len <= 0)
        return;
    } else if (searches_micro_batch || batch.has("micro_batch")) {
      return; // the loader's own message (global_batch missing) comes from the full path
    } else if (auto m = batch.optional_child("microbatches")) {
      inputs_.microbatches = m->as_count(sim::kMaxMicrobatches, "micro-batches");
    }
    if (auto p = root.optional_child("parallelism"))
      base_ = sim::read_layout(*p);
    usable_ = true;
  } catch (const std::exception&) {
    usable_ = false; // the full path reports what is wrong with the plan's fixed keys
  }
}

std::optional<sim::LayoutProblem> LayoutPrecheck::problem(const std::vector<size_t>& pick) const {
  if (!usable_)
    return std::nullopt;
  model::ParallelLayout l = base_;
  sim::LayoutInputs in = inputs_;
  for (size_t a = 0; a < pick.size(); ++a) {
    const Value& v = values_[a][pick[a]];
    if (!v.known)
      return std::nullopt;
    const std::string_view key = kSearchKeys[spec_.axes[a].key].name;
    if (key == "tensor")
      l.tensor = v.number;
    else if (key == "pipeline")
      l.pipeline = v.number;
    else if (key == "context")
      l.context = v.number;
    else if (key == "expert")
      l.expert = v.number;
    else if (key == "virtual_stages")
      l.virtual_stages = v.number;
    else if (key == "sequence_parallel")
      l.sequence_parallel = v.flag;
    else if (key == "micro_batch")
      in.micro_batch = v.number;
    else if (key == "sharding")
      in.sharding = v.sharding;
  }
  long long microbatches = 0;
  return sim::check_layout(l, in, &microbatches);
}

} // namespace memwall::plan
