// `plan`'s cheap checks: each candidate's layout checked on plain numbers, by the loader's own
// sim::check_layout, before any scenario is built for it. Most layouts of a wide search break a
// divisibility rule; building, parsing and checking a scenario for each (and its fabric graph) cost
// 0.3-5 ms a layout, so that a search of 10^6 layouts took minutes before the first estimate.
#pragma once

#include "plan_spec.hpp"
#include "sim/scenario/parallelism.hpp"

#include <optional>
#include <vector>

namespace memwall::plan {

class LayoutPrecheck {
public:
  // Reads the plan's fixed numbers (GPUs, model, batch, the base's parallelism) and every searched
  // value once, with the loader's own parsers. Where one cannot be read so (a value the loader would
  // refuse, a key the check does not know), the candidates it concerns skip the pre-check and take
  // the full path, which reports them as before.
  explicit LayoutPrecheck(const PlanSpec& spec);

  // The candidate's problem, as the loader would report it, for `pick` (a value index per axis);
  // nullopt when it passes or cannot be checked here.
  std::optional<sim::LayoutProblem> problem(const std::vector<size_t>& pick) const;

private:
  struct Value {
    bool known = false;
    long long number = 0; // degrees, micro_batch
    bool flag = false;    // sequence_parallel
    model::Sharding sharding = model::Sharding::None;
  };
  const PlanSpec& spec_;
  bool usable_ = false;
  model::ArchitectureSpec arch_;
  model::ParallelLayout base_;
  sim::LayoutInputs inputs_;
  std::vector<std::vector<Value>> values_; // per axis, per value
};

} // namespace memwall::plan
