#include "plan_report.hpp"

#include "model/seed_tables.hpp"
#include "sim/output/safe_file.hpp"

#include <algorithm>
#include <utility>
#include <cmath>
#include <filesystem>
#include <numeric>

namespace memwall::plan {

namespace {

double number(const sweep::ResultsTable& t, long long point, const std::string& column) {
  const std::string text = t.cell(point, column);
  return text.empty() ? std::nan("") : std::stod(text);
}

std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]])
      ++j;
    for (size_t k = i; k <= j; ++k)
      r[order[k]] = 0.5 * double(i + j) + 1.0;
    i = j + 1;
  }
  return r;
}

// The fabric's simulated points that finished, best first by the plan's objective: simulated
// throughput (time), facility energy per token (energy) or the run's cost (cost).
std::vector<size_t> finished_by_objective(const PlanSpec& spec, const PlannedPoints& points, size_t f,
                                          const sweep::ResultsTable& results) {
  std::vector<size_t> done;
  for (size_t i = 0; i < points.by_fabric[f].size(); ++i)
    if (results.has_ok_row(points.by_fabric[f][i]))
      done.push_back(i);
  // With failures (reliability:), the days a run of the scenario's length takes including them
  // (tokens or steps), or the tokens/s it keeps (a run given as a duration).
  auto days = [&](size_t i) { return number(results, points.by_fabric[f][i], "run_days_with_failures"); };
  auto kept = [&](size_t i) {
    const long long point = points.by_fabric[f][i];
    const double goodput = number(results, point, "goodput");
    return number(results, point, "tokens_per_s_per_gpu") * (goodput > 0 ? goodput : 1.0);
  };
  const bool by_days = !done.empty() && number(results, points.by_fabric[f][done[0]], "goodput") > 0 &&
                       number(results, points.by_fabric[f][done[0]], "run_days") !=
                           number(results, points.by_fabric[f][done[0]], "run_days_with_failures");
  auto value = [&](size_t i, const char* key) { return number(results, points.by_fabric[f][i], key); };
  std::stable_sort(done.begin(), done.end(), [&](size_t a, size_t b) {
    if (spec.objective == "energy")
      return value(a, "facility_mj_per_token") < value(b, "facility_mj_per_token");
    if (spec.objective == "cost")
      return value(a, "run_cost") < value(b, "run_cost");
    return by_days ? days(a) < days(b) : kept(a) > kept(b);
  });
  return done;
}

std::string file_name_for(const std::string& label) {
  std::string stem = std::filesystem::path(label).stem().string();
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      c = '-';
  return stem.empty() ? "fabric" : stem;
}

// The fastest and the most frugal simulated layout side by side, each with its step, energy per
// token and, with run: (and cost:), the run's days, facility MWh and money: the trade-off in two lines.
void print_fastest_and_frugal(std::ostream& out, const PlannedPoints& points, size_t f,
                              const std::vector<size_t>& done, const sweep::ResultsTable& results) {
  size_t fastest = done[0], frugal = done[0];
  for (size_t i : done) {
    const long long p = points.by_fabric[f][i];
    if (number(results, p, "step_time_s") < number(results, points.by_fabric[f][fastest], "step_time_s"))
      fastest = i;
    if (number(results, p, "facility_mj_per_token") <
        number(results, points.by_fabric[f][frugal], "facility_mj_per_token"))
      frugal = i;
  }
  for (const auto& [label, i] : {std::pair<const char*, size_t>{"fastest", fastest}, {"most frugal", frugal}}) {
    const long long p = points.by_fabric[f][i];
    out << model::format("  %-11s %s: step %.4g s, %.4g mJ/token at the facility", label,
                         points.candidates[f][i]->layout.c_str(), number(results, p, "step_time_s"),
                         number(results, p, "facility_mj_per_token"));
    if (number(results, p, "run_steps") > 0)
      out << model::format(", run %.1f days, %.1f MWh, cost %.0f", number(results, p, "run_days"),
                           number(results, p, "run_facility_mwh"), number(results, p, "run_cost"));
    out << "\n";
  }
}

} // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || a.size() != b.size())
    return std::nan("");
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = double(a.size());
  const double mean = (n + 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::nan("");
}

void print_plan_report(std::ostream& out, const PlanSpec& spec, const std::vector<FabricPlan>& plans,
                       const PlannedPoints& points, const sweep::ResultsTable& results) {
  std::vector<double> best(plans.size(), 0.0);
  std::vector<std::string> best_layout(plans.size());
  for (size_t f = 0; f < plans.size(); ++f) {
    const FabricPlan& plan = plans[f];
    out << "\n"
        << spec.name << " on " << plan.label << ": " << plan.layouts << " layouts, " << plan.broken
        << " break a constraint, " << plan.too_big << " do not fit, " << plan.ranked.size() << " estimated, "
        << points.by_fabric[f].size() << " simulated\n";
    // The step's breakdown (sums to "step s"): compute, TP, CP, EP, pipeline transfer + bubble, DP
    // with the optimizer, and waiting for the last GPU.
    out << model::format("%3s %-58s %10s %9s %6s %7s %8s %8s %8s %8s %8s %8s %8s %8s %9s %7s\n", "#", "layout",
                         "tok/s/GPU", "step s", "MFU %", "mem GB", "mJ/tok", "comp s", "TP s", "CP s", "EP s",
                         "PP s", "DP s", "wait s", "est. s", "est. %");
    std::vector<double> estimated, simulated;
    const std::vector<size_t> done = finished_by_objective(spec, points, f, results);
    for (size_t k = 0; k < done.size(); ++k) {
      const long long point = points.by_fabric[f][done[k]];
      const Candidate& c = *points.candidates[f][done[k]];
      const double step = number(results, point, "step_time_s");
      const double est = c.estimate.step_s;
      estimated.push_back(est);
      simulated.push_back(step);
      out << model::format(
          "%3zu %-58s %10.1f %9.4g %6.1f %7.1f %8.4g %8.4g %8.3g %8.3g %8.3g %8.3g %8.3g %8.3g %9.4g %+7.1f\n",
          k + 1, c.layout.c_str(), number(results, point, "tokens_per_s_per_gpu"), step,
          100 * number(results, point, "mfu"), c.memory_bytes / 1e9, number(results, point, "mj_per_token"),
          number(results, point, "breakdown_compute_s"), number(results, point, "breakdown_tp_s"),
          number(results, point, "breakdown_cp_s"), number(results, point, "breakdown_ep_s"),
          number(results, point, "breakdown_pp_transfer_s") + number(results, point, "breakdown_pp_bubble_s"),
          number(results, point, "breakdown_dp_s") + number(results, point, "breakdown_optimizer_s"),
          number(results, point, "breakdown_wait_s"), est, 100 * (est / step - 1));
    }
    for (size_t i = 0; i < points.by_fabric[f].size(); ++i)
      if (!results.has_ok_row(points.by_fabric[f][i]))
        out << "    not simulated: " << points.candidates[f][i]->layout
            << (results.rows().count(points.by_fabric[f][i])
                    ? " (" + results.cell(points.by_fabric[f][i], "error") + ")"
                    : std::string(" (missing: another shard's, or not run yet)"))
            << "\n";
    if (!done.empty()) {
      best[f] = number(results, points.by_fabric[f][done[0]], "tokens_per_s_per_gpu");
      best_layout[f] = points.candidates[f][done[0]]->layout;
      out << "best on " << plan.label << (spec.objective == "time" ? "" : " by " + spec.objective) << ": "
          << best_layout[f] << model::format(", %.1f tokens/s/GPU\n", best[f]);
      const long long top = points.by_fabric[f][done[0]];
      print_fastest_and_frugal(out, points, f, done, results);
      if (number(results, top, "run_steps") > 0) // the scenario's run: and cost:, at the best layout
        out << model::format("training run with it: %.1f days, %.0f GPU-hours, %.1f MWh at the facility, cost %.0f, "
                             "%.1f t CO2e\n",
                             number(results, top, "run_days"), number(results, top, "run_gpu_hours"),
                             number(results, top, "run_facility_mwh"), number(results, top, "run_cost"),
                             number(results, top, "run_co2_t"));
      if (number(results, top, "goodput") > 0) // reliability:, ranked by it
        out << model::format("with failures (ranked by them): %.1f%% effective training time, %.0f interruptions, "
                             "%.1f days (P90 %.1f), checkpoint every %.0f s\n",
                             100 * number(results, top, "goodput"), number(results, top, "interruptions"),
                             number(results, top, "run_days_with_failures"),
                             number(results, top, "run_days_with_failures_p90"),
                             number(results, top, "checkpoint_interval_s"));
    }
    const double rho = spearman(estimated, simulated);
    if (!std::isnan(rho))
      out << model::format("estimate vs simulation: Spearman rank correlation %.3f over %zu layouts\n", rho,
                           estimated.size());
  }
  for (size_t a = 0; a < plans.size(); ++a)
    for (size_t b = a + 1; b < plans.size(); ++b) {
      if (best[a] <= 0 || best[b] <= 0)
        continue;
      const bool b_slower = best[b] <= best[a];
      const size_t fast = b_slower ? a : b, slow = b_slower ? b : a;
      out << model::format("%s is %.1f%% slower than %s on their best layouts (%.1f vs %.1f tokens/s/GPU)\n",
                           plans[slow].label.c_str(), 100 * (1 - best[slow] / best[fast]),
                           plans[fast].label.c_str(), best[slow], best[fast]);
    }
}

std::vector<std::string> write_best_layouts(const std::string& dir, const PlanSpec& spec,
                                            const std::vector<FabricPlan>& plans, const PlannedPoints& points,
                                            const sweep::ResultsTable& results) {
  std::vector<std::string> written;
  std::filesystem::create_directories(dir);
  for (size_t f = 0; f < plans.size(); ++f) {
    const std::vector<size_t> done = finished_by_objective(spec, points, f, results);
    if (done.empty() || done.size() != points.by_fabric[f].size())
      continue;
    const Candidate& c = *points.candidates[f][done[0]];
    const std::string path =
        (std::filesystem::path(dir) / (file_name_for(plans[f].label) + ".yaml")).string();
    const std::string header =
        "# Best layout found by `memwall plan " + spec.file + "` on " + plans[f].label + ": " + c.layout +
        model::format(" (%.1f tokens/s/GPU simulated)\n",
                      number(results, points.by_fabric[f][done[0]], "tokens_per_s_per_gpu"));
    output::write_atomically(path, header + c.scenario_yaml + "\n");
    written.push_back(path);
  }
  return written;
}

} // namespace memwall::plan
