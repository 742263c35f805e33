// `memwall plan`: enumerate a plan's layouts, estimate those that fit, simulate the best per fabric
// (through the sweep machinery: processes, resume, shards, merge), report.
#include "commands.hpp"

#include "model/input_error.hpp"
#include "model/seed_tables.hpp"
#include "sim/output/result_json.hpp"
#include "sim/output/safe_file.hpp"
#include "sim/plan/plan_report.hpp"
#include "sim/plan/planner.hpp"
#include "sim/sweep/point_runner.hpp"
#include "sim/sweep/process_pool.hpp"
#include "sim/sweep/progress.hpp"
#include "sim/sweep/results_hdf5.hpp"
#include "sim/sweep/slurm_submit.hpp"
#include "sim/sweep/sweep_spec.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace memwall::cli {

namespace {

using plan::Candidate;

const std::vector<std::string> kLayoutColumns{"fabric",
                                              "estimate_rank",
                                              "layout",
                                              "tensor",
                                              "sequence_parallel",
                                              "pipeline",
                                              "virtual_stages",
                                              "context",
                                              "expert",
                                              "data",
                                              "micro_batch",
                                              "activation_recompute",
                                              "sharding",
                                              "memory_bytes",
                                              "estimate_step_s",
                                              "estimate_tokens_per_s_per_gpu"};
std::vector<std::string> plan_columns() {
  std::vector<std::string> columns{"point", "status", "error", "sweep_points"};
  columns.insert(columns.end(), kLayoutColumns.begin(), kLayoutColumns.end());
  for (const auto& k : sim::deterministic_record_keys())
    columns.push_back(k);
  return columns;
}

std::string num(double v) {
  return model::format("%.17g", v);
}

std::vector<std::string> layout_cells(const plan::PlanSpec& spec, const Candidate& c, long long rank) {
  const model::ParallelLayout& l = c.parallel;
  return {spec.fabrics[c.fabric].label,
          std::to_string(rank + 1),
          c.layout,
          std::to_string(l.tensor),
          l.sequence_parallel ? "true" : "false",
          std::to_string(l.pipeline),
          std::to_string(l.virtual_stages),
          std::to_string(l.context),
          std::to_string(l.expert),
          std::to_string(l.data),
          std::to_string(c.micro_batch),
          c.recompute,
          c.sharding,
          num(c.memory_bytes),
          num(c.estimate.step_s),
          num(c.estimate.tokens_per_s_per_gpu)};
}

std::vector<std::string> row_for(const plan::PlanSpec& spec, const Candidate& c, long long rank,
                                 long long point, long long total, const std::string& error,
                                 const nlohmann::json* record) {
  std::vector<std::string> row{std::to_string(point), error.empty() ? "ok" : "error", error,
                               std::to_string(total)};
  for (auto& cell : layout_cells(spec, c, rank))
    row.push_back(cell);
  if (record) {
    for (const auto& k : sim::deterministic_record_keys())
      row.push_back(sim::record_cell(*record, k));
  }
  row.resize(plan_columns().size());
  return row;
}

// The shard's layouts left to simulate; a resumed file must be this plan's (same layout per point).
void check_resumable(const sweep::ResultsTable& previous, const plan::PlanSpec& spec,
                     const std::vector<const Candidate*>& by_point, const std::string& out) {
  if (previous.columns() != plan_columns())
    throw model::InputError(out, 0, "--resume", "its columns are not a plan's; not resuming into it");
  for (const auto& [point, row] : previous.rows()) {
    if (point < 0 || point >= static_cast<long long>(by_point.size()))
      throw model::InputError(out, 0, "--resume",
                              "point " + std::to_string(point) +
                                  " is not a layout this plan simulates; not resuming into it");
    const Candidate& c = *by_point[size_t(point)];
    if (previous.cell(point, "layout") != c.layout ||
        previous.cell(point, "fabric") != spec.fabrics[c.fabric].label)
      throw model::InputError(out, 0, "--resume",
                              "point " + std::to_string(point) + " is " + previous.cell(point, "layout") +
                                  ", this plan now simulates " + c.layout + " there; not resuming into it");
  }
}

} // namespace

int plan_command(const PlanOptions& options) {
  plan::PlanSpec spec;
  sweep::Shard shard;
  std::vector<plan::FabricPlan> plans;
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  try {
    spec = plan::load_plan(options.file);
    if (options.top > 0)
      spec.top = options.top;
    spec.objective = options.objective;
    if (spec.objective == "cost" && !(spec.scenario["cost"] && spec.scenario["run"]))
      throw model::InputError(options.file, 0, "--objective",
                              "cost needs the plan's run: (tokens or steps) and cost: (gpu_hour, kwh) to price");
    shard = sweep::parse_shard(options.shard);
    if (!options.out.empty()) {
      output::check_output_target(options.out, "--out", {".csv", ".h5", ".hdf5"});
      if (output::same_file(options.out, options.file))
        throw model::InputError(options.out, 0, "--out", "is the plan file itself");
    } else if (shard.count > 1 || options.resume || options.slurm.any()) {
      throw model::InputError("--out", 0, "",
                              "--shard, --resume and --slurm need a results file (--out R.csv or R.h5)");
    }
    if (options.slurm.any() && shard.count > 1)
      throw model::InputError("--shard", 0, "", "--slurm makes the shards itself (--shards M)");
    std::cerr << "memwall: plan " << spec.file << ": " << spec.candidates() << " layouts per fabric, "
              << spec.fabrics.size() << " fabric(s); checking constraints and memory, estimating\n";
    plans = plan::enumerate_and_estimate(spec, [&](const plan::FabricPlan& p) {
      std::cerr << "memwall: " << p.label << ": " << p.layouts << " layouts, " << p.broken
                << " break a constraint, " << p.too_big << " do not fit in HBM, " << p.ranked.size()
                << " estimated\n";
      std::vector<std::pair<long long, std::string>> why;
      for (const auto& [reason, count] : p.why)
        why.emplace_back(-count, reason);
      std::sort(why.begin(), why.end());
      for (size_t i = 0; i < why.size() && i < 4; ++i)
        std::cerr << "memwall:   " << -why[i].first << " x " << why[i].second << "\n";
    });
    for (size_t f = 0; f < plans.size(); ++f) {
      const plan::FabricPlan& p = plans[f];
      if (!p.ranked.empty())
        continue;
      const int line = spec.root->child("search").line();
      if (p.has_closest)
        throw model::InputError(
            spec.file, line, "search",
            "no layout fits in HBM on " + p.label +
                model::format(" (headroom %.0f%%); the closest, ", 100 * spec.headroom) + p.closest.layout +
                model::format(", needs %.1f GB per GPU, %.1f GB more than the %.1f GB usable",
                              p.closest.memory_bytes / 1e9, p.shortfall_bytes / 1e9,
                              p.closest.capacity_bytes * (1 - spec.headroom) / 1e9));
      std::string why;
      for (const auto& [reason, count] : p.why)
        why += (why.empty() ? "" : "; ") + std::to_string(count) + " x " + reason;
      throw model::InputError(spec.file, line, "search",
                              "no layout meets the constraints on " + p.label + " (" + why + ")");
    }
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  }

  // The points to simulate: the top K of each fabric, numbered fabric by fabric.
  plan::PlannedPoints points;
  std::vector<const Candidate*> by_point;
  std::vector<long long> rank_of_point;
  for (const plan::FabricPlan& p : plans) {
    points.by_fabric.emplace_back();
    points.candidates.emplace_back();
    for (size_t r = 0; r < p.ranked.size() && r < size_t(spec.top); ++r) {
      points.by_fabric.back().push_back(static_cast<long long>(by_point.size()));
      points.candidates.back().push_back(&p.ranked[r]);
      by_point.push_back(&p.ranked[r]);
      rank_of_point.push_back(static_cast<long long>(r));
    }
  }
  const long long total = static_cast<long long>(by_point.size());
  if (options.slurm.any()) {
    sweep::SlurmRequest request;
    request.command = "plan";
    request.file = options.file;
    request.out = options.out;
    request.points = total;
    request.shards = options.slurm.shards;
    request.jobs_per_task = options.jobs;
    request.task_args = {"--top", std::to_string(spec.top)};
    // After the merge, the report (and the best layouts) from the merged results, without simulating.
    request.report_args = {"plan",
                           std::filesystem::absolute(options.file).string(),
                           "--resume",
                           "--out",
                           std::filesystem::absolute(options.out).string(),
                           "--top",
                           std::to_string(spec.top),
                           "--objective",
                           spec.objective};
    if (!options.write_best.empty()) {
      request.report_args.push_back("--write-best");
      request.report_args.push_back(std::filesystem::absolute(options.write_best).string());
    }
    request.sbatch_args = options.slurm.sbatch_args;
    request.dry_run = options.slurm.dry_run;
    try {
      sweep::submit_to_slurm(request);
    } catch (const model::InputError& e) {
      std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
      return kExitBadInput;
    } catch (const std::exception& e) {
      std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
      return kExitInternal;
    }
    return kExitOk;
  }
  sweep::ResultsTable results(plan_columns());
  if (options.resume && std::filesystem::exists(options.out)) {
    try {
      sweep::ResultsTable previous = sweep::load_results(options.out);
      check_resumable(previous, spec, by_point, options.out);
      results = previous;
    } catch (const std::exception& e) {
      std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
      return kExitBadInput;
    }
  }
  std::vector<sweep::PointJob> todo;
  long long skipped = 0, failed = 0;
  for (long long point = 0; point < total; ++point) {
    if (!shard.has(point))
      continue;
    if (results.has_ok_row(point)) {
      ++skipped;
      continue;
    }
    const Candidate& c = *by_point[size_t(point)];
    todo.push_back(
        {point, c.scenario_yaml, spec.file + " (" + spec.fabrics[c.fabric].label + ": " + c.layout + ")"});
  }
  if (skipped)
    std::cerr << "memwall: resuming: " << skipped << " layout(s) already simulated in " << options.out
              << "\n";
  std::cerr << "memwall: simulating " << todo.size() << " layout(s)"
            << (shard.count > 1 ? " (shard " + options.shard + " of the " + std::to_string(total) + ")" : "")
            << " with " << options.jobs << " process(es)\n";
  sweep::Progress progress(static_cast<long long>(todo.size()), terminal, "plan");
  try {
    if (!options.out.empty())
      sweep::save_results(results, options.out);
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitInternal;
  }
  const int stopped = sweep::run_points_reporting(
      todo, options.jobs, progress, "plan", options.out,
      [&](const sweep::PointJob& job, const std::string& error, const nlohmann::json* record) {
        const Candidate& c = *by_point[size_t(job.index)];
        results.set_row(job.index,
                        row_for(spec, c, rank_of_point[size_t(job.index)], job.index, total, error, record));
        if (!options.out.empty())
          sweep::save_results(results, options.out);
        failed += error.empty() ? 0 : 1;
        progress.point_done(job.index, error.empty(), error);
      });
  if (stopped >= 0)
    return stopped;
  plan::print_plan_report(std::cout, spec, plans, points, results);
  if (!options.write_best.empty()) {
    try {
      for (const auto& path : plan::write_best_layouts(options.write_best, spec, plans, points, results))
        std::cerr << "memwall: wrote " << path << "\n";
    } catch (const std::exception& e) {
      std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
      return kExitInternal;
    }
  }
  if (!options.out.empty())
    std::cerr << "memwall: results in " << options.out << "\n";
  return failed ? kExitInternal : kExitOk;
}

} // namespace memwall::cli
