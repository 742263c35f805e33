#include "plan_spec.hpp"

#include "sim/scenario/scenario.hpp"
#include "topologies/fabric_loader.hpp"

#include <filesystem>
#include <limits>
#include <set>

namespace memwall::plan {

using model::InputNode;
namespace fs = std::filesystem;

namespace {

// Scenario keys of the plan file go over the base's: maps merge key by key, anything else replaces.
void merge_into(YAML::Node target, const YAML::Node& overlay) {
  for (const auto& item : overlay) {
    const std::string key = item.first.as<std::string>();
    if (item.second.IsMap() && target[key] && target[key].IsMap())
      merge_into(target[key], item.second);
    else
      target[key] = YAML::Clone(item.second);
  }
}

// A relative fabric path is resolved where it was written.
YAML::Node absolute_fabric(const YAML::Node& value, const std::string& origin_file) {
  if (!value.IsScalar())
    return YAML::Clone(value);
  const std::string text = value.as<std::string>();
  const fs::path p(text);
  if ((text.find('/') == std::string::npos && p.extension() != ".yaml") || p.is_absolute())
    return YAML::Clone(value);
  return YAML::Node(fs::absolute(fs::path(origin_file).parent_path() / p).lexically_normal().string());
}

std::vector<YAML::Node> search_values(const InputNode& list, const SearchKey& key) {
  std::vector<YAML::Node> values;
  const std::string name = key.name;
  if (name == "pipeline" && list.is_scalar() && list.as_string() == "auto")
    return values; // expanded once the model's layer count is known
  if (!list.is_sequence())
    list.fail(name == "pipeline" ? "expected a list of values or 'auto'" : "expected a list of values");
  if (list.elements().empty())
    list.fail("the list of values is empty");
  std::set<std::string> seen;
  for (const InputNode& v : list.elements()) {
    if (name == "activation_recompute")
      v.as_one_of({"none", "selective", "full"});
    else if (name == "sharding")
      v.as_one_of({"none", "zero1", "zero2", "zero3"});
    else if (name == "sequence_parallel")
      v.as_bool();
    else
      v.as_count(1000000, "ways");
    if (!seen.insert(v.as_string()).second)
      v.fail("value '" + v.as_string() + "' is listed twice");
    values.push_back(v.yaml());
  }
  return values;
}

} // namespace

long long PlanSpec::candidates() const {
  // Saturating: six axes of 1,500 values overflowed to a negative count that passed the limit.
  long long n = 1;
  for (const SearchAxis& a : axes) {
    const auto size = static_cast<long long>(a.values.size());
    if (size > 0 && n > std::numeric_limits<long long>::max() / size)
      return std::numeric_limits<long long>::max();
    n *= size;
  }
  return n;
}

PlanSpec load_plan(const std::string& path) {
  const InputNode root = InputNode::load_file(path);
  root.require_map();
  PlanSpec spec;
  spec.file = path;
  spec.root = root;
  static const std::set<std::string> plan_keys{"base", "fabrics", "search", "top", "headroom"};
  // The scenario: the base (a file, or inline), then every other key of the plan file over it.
  YAML::Node scenario(YAML::NodeType::Map);
  if (auto base = root.optional_child("base")) {
    if (base->is_map()) {
      scenario = YAML::Clone(base->yaml());
    } else {
      fs::path p = base->as_string();
      if (p.is_relative())
        p = fs::path(path).parent_path() / p;
      try {
        scenario = YAML::Clone(InputNode::load_file(p.string()).yaml());
      } catch (const model::InputError& e) {
        base->fail(std::string("cannot use the base scenario: ") + e.what());
      }
      if (!scenario.IsMap())
        base->fail("the base scenario is not a mapping");
      // Its relative fabric path is relative to its own file.
      if (scenario["cluster"] && scenario["cluster"].IsMap() && scenario["cluster"]["fabric"])
        scenario["cluster"]["fabric"] = absolute_fabric(scenario["cluster"]["fabric"], p.string());
    }
  }
  YAML::Node overlay(YAML::NodeType::Map);
  for (const auto& [key, node] : root.entries())
    if (!plan_keys.count(key))
      overlay[key] = node.yaml();
  merge_into(scenario, overlay);
  if (scenario["cluster"] && scenario["cluster"].IsMap() && scenario["cluster"]["fabric"] &&
      root.has("cluster"))
    if (root.child("cluster").has("fabric"))
      scenario["cluster"]["fabric"] = absolute_fabric(scenario["cluster"]["fabric"], path);
  spec.name = scenario["name"] && scenario["name"].IsScalar() ? scenario["name"].Scalar()
                                                              : fs::path(path).stem().string();
  spec.scenario = scenario;

  // Fabrics: each loads now, so that a bad one fails before any work.
  if (auto fabrics = root.optional_child("fabrics")) {
    if (!fabrics->is_sequence() || fabrics->elements().empty())
      fabrics->fail("expected a non-empty list of fabrics (names, files or mappings)");
    std::set<std::string> labels;
    for (const InputNode& f : fabrics->elements()) {
      const topologies::FabricSpec fabric = topologies::parse_fabric(f);
      PlanFabric pf;
      pf.value = absolute_fabric(f.yaml(), path);
      pf.label = f.is_scalar() ? f.as_string()
                               : (!fabric.name.empty() ? fabric.name
                                                       : "fabric " + std::to_string(spec.fabrics.size() + 1));
      pf.line = f.line();
      if (!labels.insert(pf.label).second)
        f.fail("fabric '" + pf.label + "' is listed twice");
      spec.fabrics.push_back(pf);
    }
  } else {
    const YAML::Node cluster = scenario["cluster"];
    if (!cluster || !cluster.IsMap() || !cluster["fabric"])
      root.fail("give the fabrics to plan for: 'fabrics: [...]', or a scenario 'cluster.fabric'");
    PlanFabric pf;
    pf.value = YAML::Clone(cluster["fabric"]);
    pf.label = pf.value.IsScalar() ? fs::path(pf.value.Scalar()).stem().string() : "fabric";
    pf.line = root.has("cluster") && root.child("cluster").has("fabric")
                  ? root.child("cluster").child("fabric").line()
                  : root.line();
    spec.fabrics.push_back(pf);
  }

  const InputNode search = root.child("search");
  search.require_map();
  if (search.entries().empty())
    search.fail("no key to search (searchable: tensor, sequence_parallel, pipeline, virtual_stages, context, "
                "expert, micro_batch, activation_recompute, sharding)");
  for (const auto& [key, list] : search.entries()) {
    size_t k = 0;
    while (k < kSearchKeyCount && key != kSearchKeys[k].name)
      ++k;
    if (k == kSearchKeyCount)
      list.fail("unknown search key '" + key +
                "' (searchable: tensor, sequence_parallel, pipeline, virtual_stages, "
                "context, expert, micro_batch, activation_recompute, sharding)");
    SearchAxis axis;
    axis.key = k;
    axis.values = search_values(list, kSearchKeys[k]);
    axis.line = list.line();
    spec.axes.push_back(axis);
  }
  std::sort(spec.axes.begin(), spec.axes.end(),
            [](const SearchAxis& a, const SearchAxis& b) { return a.key < b.key; });
  // `pipeline: auto`: the divisors of the layer count, up to a bound.
  for (SearchAxis& axis : spec.axes)
    if (axis.values.empty()) {
      const YAML::Node model_node = scenario["model"];
      if (!model_node)
        search.child("pipeline").fail("'auto' needs the scenario's model (its layer count)");
      const model::ArchitectureSpec arch = sim::parse_model(InputNode(model_node, path, "model"));
      for (long long p = 1; p <= std::min(model::model_layers(arch), kAutoPipelineMax); ++p)
        if (model::model_layers(arch) % p == 0)
          axis.values.emplace_back(p);
    }
  if (spec.candidates() > kMaxCandidates)
    search.fail("the search has " +
                (spec.candidates() == std::numeric_limits<long long>::max() ? "over 9 x 10^18"
                                                                            : std::to_string(spec.candidates())) +
                " layouts per fabric, over the limit of " + std::to_string(kMaxCandidates) +
                " (see docs/reference.md, Input limits); narrow a range");
  if (auto top = root.optional_child("top"))
    spec.top = top->as_count(10000, "layouts");
  if (auto headroom = root.optional_child("headroom")) {
    spec.headroom = headroom->as_non_negative_number();
    if (spec.headroom >= 1)
      headroom->fail("the fraction of HBM kept free must be below 1");
  }
  return spec;
}

bool is_layout_error(const model::InputError& error) {
  const std::string& key = error.key();
  for (const SearchKey& k : kSearchKeys)
    if (key.rfind(k.scenario_key, 0) == 0)
      return true;
  // Batch divisibility and the layout's checks report under these keys.
  return key.rfind("parallelism", 0) == 0 || key.rfind("batch", 0) == 0;
}

model::InputError locate_in_plan(const PlanSpec& spec, const model::InputError& error, size_t fabric) {
  const std::string& key = error.key();
  const InputNode& root = *spec.root;
  // An error about the fabric (the candidate's `cluster.fabric`, or in the fabric's own file, e.g. a
  // catalog torus too small for the cluster) is the plan's `fabrics:` entry that was being tried.
  const bool in_candidate = error.file().rfind(spec.file + " (", 0) == 0;
  if (root.has("fabrics") && fabric < spec.fabrics.size() && (key.rfind("cluster.fabric", 0) == 0 || !in_candidate))
    return model::InputError(spec.file, spec.fabrics[fabric].line, "fabrics[" + std::to_string(fabric) + "]",
                             "fabric " + model::quoted(spec.fabrics[fabric].label) + ": " +
                                 (in_candidate ? error.reason() : std::string(error.what())));
  for (const SearchAxis& axis : spec.axes)
    if (key.rfind(kSearchKeys[axis.key].scenario_key, 0) == 0)
      return model::InputError(spec.file, axis.line, "search." + std::string(kSearchKeys[axis.key].name),
                               error.reason());
  // The deepest part of the key the plan file has; else the base's.
  std::optional<InputNode> node = root;
  if (!root.has(key.substr(0, key.find_first_of(".["))) && root.has("base") && !root.child("base").is_map()) {
    fs::path p = root.child("base").as_string();
    if (p.is_relative())
      p = fs::path(spec.file).parent_path() / p;
    node = InputNode::load_file(p.string());
  } else if (!root.has(key.substr(0, key.find_first_of(".["))) && root.has("base")) {
    node = root.child("base");
  }
  size_t start = 0;
  while (start < key.size()) {
    const size_t end = key.find_first_of(".[", start);
    const std::string part = key.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || !node->is_map() || !node->has(part))
      break;
    node = node->child(part);
    if (end == std::string::npos || key[end] == '[')
      break;
    start = end + 1;
  }
  return model::InputError(node->file(), node->line(), key, error.reason());
}

} // namespace memwall::plan
