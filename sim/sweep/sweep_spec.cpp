#include "sweep_spec.hpp"

#include "model/input_error.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace memwall::sweep {

using model::InputNode;

namespace {

// One axis of the grid: keys that move together and their values, one list per key.
struct Axis {
  std::vector<std::string> keys;
  std::vector<std::vector<YAML::Node>> values; // values[key][i]
  std::vector<std::vector<int>> lines;         // lines[key][i] in the sweep file
  size_t size() const { return values.front().size(); }
};

InputNode load_base(const InputNode& root) {
  const bool has_base = root.has("base"), has_inline = root.has("scenario");
  if (has_base == has_inline)
    root.fail("give exactly one of 'base' (a scenario file) or 'scenario' (inline)");
  if (has_inline) {
    root.child("scenario").require_map();
    return root.child("scenario");
  }
  const InputNode base = root.child("base");
  std::filesystem::path path = base.as_string();
  if (path.is_relative())
    path = std::filesystem::path(root.file()).parent_path() / path;
  try {
    return InputNode::load_file(path.string());
  } catch (const model::InputError& e) {
    base.fail(std::string("cannot use the base scenario: ") + e.what());
  }
}

std::vector<Axis> read_axes(const InputNode& root, std::vector<std::string>& keys) {
  std::map<std::string, InputNode> lists;
  for (const auto& [key, list] : root.child("sweep").entries()) {
    if (list.elements().empty())
      list.fail("the list of values is empty");
    lists.emplace(key, list);
    keys.push_back(key);
  }
  if (keys.empty())
    root.child("sweep").fail("no key to sweep");
  std::map<std::string, size_t> group_of;
  std::vector<std::vector<std::string>> groups;
  if (auto zip = root.optional_child("zip")) {
    for (const auto& group : zip->elements()) {
      std::vector<std::string> members;
      for (const auto& k : group.elements()) {
        const std::string key = k.as_string();
        if (!lists.count(key))
          k.fail("'" + key + "' is not a key of 'sweep'");
        if (group_of.count(key))
          k.fail("'" + key + "' is in two zip groups");
        if (lists.at(key).elements().size() != lists.at(group.elements()[0].as_string()).elements().size())
          k.fail("zipped keys need lists of equal length");
        group_of[key] = groups.size();
        members.push_back(key);
      }
      groups.push_back(members);
    }
  }
  std::vector<Axis> axes;
  std::set<size_t> placed;
  for (const auto& key : keys) { // axes in the order of their first key
    std::vector<std::string> members{key};
    if (auto it = group_of.find(key); it != group_of.end()) {
      if (!placed.insert(it->second).second)
        continue;
      members = groups[it->second];
    }
    Axis axis;
    axis.keys = members;
    for (const auto& m : members) {
      std::vector<YAML::Node> values;
      std::vector<int> lines;
      for (const auto& v : lists.at(m).elements()) {
        values.push_back(v.yaml());
        lines.push_back(v.line());
      }
      axis.values.push_back(values);
      axis.lines.push_back(lines);
    }
    axes.push_back(axis);
  }
  return axes;
}

} // namespace

std::string compact_yaml(const YAML::Node& node) {
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

void assign_dotted(YAML::Node root, const std::string& dotted, const YAML::Node& value) {
  YAML::Node cur = root;
  size_t start = 0;
  while (true) {
    const size_t dot = dotted.find('.', start);
    const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos) {
      cur[key] = YAML::Clone(value);
      return;
    }
    if (!cur[key].IsMap())
      cur[key] = YAML::Node(YAML::NodeType::Map);
    YAML::Node next = cur[key];
    cur.reset(next);
    start = dot + 1;
  }
}

SweepSpec load_sweep(const std::string& path) {
  const InputNode root = InputNode::load_file(path);
  root.check_keys({"base", "scenario", "sweep", "zip", "report"});
  SweepSpec spec;
  spec.file = path;
  spec.base = load_base(root);
  const YAML::Node base = spec.base->yaml();
  const std::vector<Axis> axes = read_axes(root, spec.keys);
  if (auto report = root.optional_child("report")) {
    report->check_keys({"kind", "b_crit_tokens"});
    spec.report.kind = report->child("kind").as_string();
    if (spec.report.kind != "squeeze")
      report->child("kind").fail("unknown report '" + spec.report.kind + "' (known: squeeze)");
    if (auto b = report->optional_child("b_crit_tokens"))
      spec.report.b_crit_tokens = b->as_positive_number();
  }
  // Full grid, first axis outermost.
  long long total = 1;
  for (const Axis& a : axes) {
    total *= static_cast<long long>(a.size()); // each list is a file's worth at most: no overflow
    if (total > kMaxSweepPoints)
      root.child("sweep").fail("the grid has over " + std::to_string(kMaxSweepPoints) +
                               " points, the limit (see docs/reference.md, Input limits); split it into several sweeps");
  }
  for (long long index = 0; index < total; ++index) {
    SweepPoint point;
    point.index = index;
    YAML::Node scenario = YAML::Clone(base);
    long long rest = index;
    std::vector<size_t> pick(axes.size());
    for (size_t a = axes.size(); a-- > 0;) {
      pick[a] = static_cast<size_t>(rest % static_cast<long long>(axes[a].size()));
      rest /= static_cast<long long>(axes[a].size());
    }
    std::map<std::string, std::string> values;
    std::map<std::string, int> lines;
    for (size_t a = 0; a < axes.size(); ++a)
      for (size_t k = 0; k < axes[a].keys.size(); ++k) {
        const std::string& key = axes[a].keys[k];
        const YAML::Node& value = axes[a].values[k][pick[a]];
        values[key] = compact_yaml(value);
        lines[key] = axes[a].lines[k][pick[a]];
        if (key.front() != '_')
          assign_dotted(scenario, key, value);
      }
    // The point's scenario is written elsewhere: a relative fabric path becomes absolute, resolved
    // where it was written (the sweep file for a swept value, else the base scenario's file).
    if (scenario["cluster"] && scenario["cluster"].IsMap() && scenario["cluster"]["fabric"] &&
        scenario["cluster"]["fabric"].IsScalar()) {
      const std::string text = scenario["cluster"]["fabric"].as<std::string>();
      const std::filesystem::path p(text);
      if ((text.find('/') != std::string::npos || p.extension() == ".yaml") && p.is_relative()) {
        const std::string& origin = lines.count("cluster.fabric") ? path : spec.base->file();
        scenario["cluster"]["fabric"] =
            std::filesystem::absolute(std::filesystem::path(origin).parent_path() / p).lexically_normal().string();
      }
    }
    // A jobs file's items name their base scenarios relative to it: absolute, as for the fabric.
    if (scenario["jobs"] && scenario["jobs"].IsSequence())
      for (YAML::Node item : scenario["jobs"])
        if (item.IsMap() && item["base"] && item["base"].IsScalar()) {
          const std::filesystem::path p(item["base"].as<std::string>());
          if (p.is_relative())
            item["base"] = std::filesystem::absolute(std::filesystem::path(spec.base->file()).parent_path() / p)
                               .lexically_normal()
                               .string();
        }
    std::string label;
    for (const auto& key : spec.keys) {
      point.values.emplace_back(key, values.at(key));
      point.value_lines.push_back(lines.at(key));
      label += (label.empty() ? "" : ", ") + key + "=" + values.at(key);
    }
    const std::string name = scenario["name"] && scenario["name"].IsScalar() ? scenario["name"].Scalar() : "sweep";
    scenario["name"] = name + " [" + label + "]";
    YAML::Emitter out;
    out << scenario;
    point.scenario_yaml = out.c_str();
    spec.points.push_back(std::move(point));
  }
  return spec;
}

Shard parse_shard(const std::string& text) {
  Shard s;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> s.index >> slash >> s.count) || slash != '/' || s.count < 1 || s.index < 1 || s.index > s.count ||
      !in.eof())
    throw model::InputError("--shard", 0, "", "expected K/M with 1 <= K <= M, got '" + text + "'");
  return s;
}

model::InputError locate_in_sweep(const SweepSpec& spec, const SweepPoint& point, const model::InputError& error) {
  const std::string& key = error.key();
  std::string reason = error.reason() + " (sweep point " + std::to_string(point.index) + ")";
  for (size_t i = 0; i < point.values.size(); ++i) {
    const std::string& swept = point.values[i].first;
    if (key == swept || key.rfind(swept + ".", 0) == 0 || key.rfind(swept + "[", 0) == 0)
      return model::InputError(spec.file, point.value_lines[i], key, reason);
  }
  // Not swept: the deepest part of the key that the base scenario has.
  InputNode node = *spec.base;
  size_t start = 0;
  while (start < key.size()) {
    const size_t end = key.find_first_of(".[", start);
    const std::string part = key.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || !node.is_map() || !node.has(part))
      break;
    node = node.child(part);
    if (end == std::string::npos || key[end] == '[')
      break;
    start = end + 1;
  }
  return model::InputError(node.file(), node.line(), key, reason);
}

} // namespace memwall::sweep
