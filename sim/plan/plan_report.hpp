// What `memwall plan` prints and writes once its layouts are simulated: per fabric a ranked table
// (simulated throughput first), the estimate's rank correlation with the simulation, the best layout
// as a runnable scenario, and one verdict line per pair of fabrics.
#pragma once

#include "planner.hpp"
#include "sim/sweep/results_table.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace memwall::plan {

// The simulated points of each fabric: point indices into the results, in estimate order.
struct PlannedPoints {
  std::vector<std::vector<long long>> by_fabric;
  std::vector<std::vector<const Candidate*>> candidates;
};

// Spearman's rank correlation of two samples (average ranks for ties); NaN below 2 values.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

void print_plan_report(std::ostream& out, const PlanSpec& spec, const std::vector<FabricPlan>& plans,
                       const PlannedPoints& points, const sweep::ResultsTable& results);

// Writes DIR/<fabric>.yaml for each fabric whose simulated layouts all finished; returns the paths.
std::vector<std::string> write_best_layouts(const std::string& dir, const PlanSpec& spec,
                                            const std::vector<FabricPlan>& plans, const PlannedPoints& points,
                                            const sweep::ResultsTable& results);

} // namespace memwall::plan
