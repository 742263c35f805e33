#include "planner.hpp"

#include "layout_precheck.hpp"
#include "model/architecture.hpp"
#include "model/seed_tables.hpp"
#include "sim/sweep/sweep_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace memwall::plan {

namespace {

std::string describe_layout(const sim::Scenario& s, long long micro_batch) {
  const model::ParallelLayout& l = s.layout;
  std::string text = "TP " + std::to_string(l.tensor) + (l.sequence_parallel ? " (SP)" : "") + " PP " +
                     std::to_string(l.pipeline);
  if (l.virtual_stages > 1)
    text += " v" + std::to_string(l.virtual_stages);
  if (l.context > 1)
    text += " CP " + std::to_string(l.context);
  if (l.expert > 1)
    text += " EP " + std::to_string(l.expert);
  text += " DP " + std::to_string(l.data);
  if (micro_batch > 0)
    text += ", mb " + std::to_string(micro_batch);
  const model::TrainingPlan& t = s.training;
  text += std::string(", recompute ") + (t.activation_recompute  ? "full"
                                         : t.selective_recompute ? "selective"
                                                                 : "none");
  text += std::string(", ") + model::sharding_name(t.sharding);
  return text;
}

// The reason's kind, for the counts: its key and text with every number as N.
std::string reason_kind(const std::string& key, const std::string& r) {
  std::string kind;
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(r[i]))) {
      while (i + 1 < r.size() && (std::isdigit(static_cast<unsigned char>(r[i + 1])) || r[i + 1] == '.'))
        ++i;
      kind += 'N';
    } else {
      kind += r[i];
    }
  }
  return key + ": " + kind;
}

} // namespace

std::vector<FabricPlan> enumerate_and_estimate(const PlanSpec& spec, const PlanProgress& progress) {
  const auto& catalog = model::GpuCatalog::builtin();
  std::vector<FabricPlan> plans;
  const long long total = spec.candidates();
  const LayoutPrecheck precheck(spec);
  sim::FabricMemo fabrics; // each fabric read and built once, not once per layout
  for (size_t f = 0; f < spec.fabrics.size(); ++f) {
    FabricPlan plan;
    plan.label = spec.fabrics[f].label;
    plan.layouts = total;
    bool have_figures = false;
    FabricFigures figures;
    std::vector<size_t> pick(spec.axes.size());
    for (long long index = 0; index < total; ++index) {
      long long rest = index;
      for (size_t a = spec.axes.size(); a-- > 0;) {
        pick[a] = static_cast<size_t>(rest % static_cast<long long>(spec.axes[a].values.size()));
        rest /= static_cast<long long>(spec.axes[a].values.size());
      }
      if (auto problem = precheck.problem(pick)) { // nothing built for a layout that cannot run
        ++plan.broken;
        ++plan.why[reason_kind(problem->key, problem->reason)];
        continue;
      }
      YAML::Node scenario = YAML::Clone(spec.scenario);
      sweep::assign_dotted(scenario, "cluster.fabric", spec.fabrics[f].value);
      std::vector<std::string> values;
      for (size_t a = 0; a < spec.axes.size(); ++a) {
        const YAML::Node& value = spec.axes[a].values[pick[a]];
        sweep::assign_dotted(scenario, kSearchKeys[spec.axes[a].key].scenario_key, value);
        values.push_back(sweep::compact_yaml(value));
      }
      std::string label;
      for (size_t a = 0; a < spec.axes.size(); ++a)
        label +=
            (label.empty() ? "" : ", ") + std::string(kSearchKeys[spec.axes[a].key].name) + "=" + values[a];
      const std::string name = spec.name + " [" + plan.label + ": " + label + "]";
      scenario["name"] = name;
      YAML::Emitter out;
      out << scenario;
      const std::string text = out.c_str();
      sim::Scenario s;
      try {
        s = sim::parse_scenario(
            model::InputNode::load_string(text, spec.file + " (" + plan.label + ": " + label + ")"), catalog,
            &fabrics);
      } catch (const model::InputError& e) {
        if (!is_layout_error(e))
          throw locate_in_plan(spec, e, f);
        ++plan.broken;
        ++plan.why[reason_kind(e.key(), e.reason())];
        continue;
      }
      Candidate c;
      c.fabric = f;
      c.index = index;
      c.values = values;
      c.scenario_yaml = text;
      c.parallel = s.layout;
      c.micro_batch = s.global_batch > 0 && s.arch.seq_len > 0
                          ? std::llround(s.tokens_per_microbatch / double(s.arch.seq_len))
                          : 0;
      c.recompute = s.training.activation_recompute  ? "full"
                    : s.training.selective_recompute ? "selective"
                                                     : "none";
      c.sharding = model::sharding_name(s.training.sharding);
      c.layout = describe_layout(s, c.micro_batch);
      const model::MemoryFootprint memory = sim::scenario_footprint(s);
      c.memory_bytes = memory.total_bytes;
      c.capacity_bytes = memory.capacity_bytes;
      c.peak_flops_per_s = s.gpu.peak_flops_per_s;
      c.model_flops_per_token =
          model::training_flops_per_token(sim::architecture_of(s), model::Recompute::None);
      const double usable = memory.capacity_bytes * (1.0 - spec.headroom);
      if (memory.total_bytes > usable) {
        ++plan.too_big;
        const double shortfall = memory.total_bytes - usable;
        if (!plan.has_closest || shortfall < plan.shortfall_bytes) {
          plan.has_closest = true;
          plan.closest = c;
          plan.shortfall_bytes = shortfall;
        }
        continue;
      }
      if (!have_figures) { // the fabric as this plan's GPU count builds it
        figures = fabric_figures(s.fabric, s.gpus);
        have_figures = true;
      }
      c.estimate = estimate_step(s, figures);
      plan.ranked.push_back(std::move(c));
    }
    std::stable_sort(plan.ranked.begin(), plan.ranked.end(), [](const Candidate& a, const Candidate& b) {
      return a.estimate.step_s < b.estimate.step_s;
    });
    if (!plan.ranked.empty())
      plan.has_closest = false;
    if (progress)
      progress(plan);
    plans.push_back(std::move(plan));
  }
  return plans;
}

} // namespace memwall::plan
