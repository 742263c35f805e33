#include "commands.hpp"

#include "model/input_error.hpp"
#include "sim/output/result_json.hpp"
#include "sim/jobs/jobs_spec.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/point_runner.hpp"
#include "sim/sweep/process_pool.hpp"
#include "sim/sweep/progress.hpp"
#include "sim/sweep/results_hdf5.hpp"
#include "sim/sweep/results_table.hpp"
#include "sim/sweep/slurm_submit.hpp"
#include "sim/sweep/squeeze_report.hpp"
#include "sim/sweep/sweep_spec.hpp"

#include "sim/output/safe_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace memwall::cli {

namespace fs = std::filesystem;
using sweep::ResultsTable;

namespace {

// Jobs in the sweep's base when it is a jobs file (several jobs on one fabric), else 0.
size_t jobs_in(const sweep::SweepSpec& spec) {
  return spec.base && spec.base->is_map() && spec.base->has("jobs") && spec.base->child("jobs").is_sequence()
             ? spec.base->child("jobs").elements().size()
             : 0;
}

std::vector<std::string> result_columns(const sweep::SweepSpec& spec) {
  // sweep_points: how many points the whole sweep has, so that a merge can name the missing ones.
  std::vector<std::string> columns{"point", "status", "error", "sweep_points"};
  columns.insert(columns.end(), spec.keys.begin(), spec.keys.end());
  const std::vector<std::string> results =
      jobs_in(spec) ? sim::jobs::sweep_jobs_columns(jobs_in(spec)) : sim::deterministic_record_keys();
  columns.insert(columns.end(), results.begin(), results.end());
  return columns;
}

std::vector<std::string> row_for(const sweep::SweepSpec& spec, const sweep::SweepPoint& p, size_t width,
                                 const std::string& error, const nlohmann::json* record) {
  std::vector<std::string> row{std::to_string(p.index), error.empty() ? "ok" : "error", error,
                               std::to_string(spec.points.size())};
  for (const auto& [key, value] : p.values)
    row.push_back(value);
  if (const size_t jobs = jobs_in(spec)) {
    for (auto& cell : sim::jobs::sweep_jobs_cells(record, jobs))
      row.push_back(std::move(cell));
  } else {
    for (const auto& k : sim::deterministic_record_keys())
      row.push_back(record ? sim::record_cell(*record, k) : "");
  }
  row.resize(width);
  return row;
}

// A resumed results file must be this sweep's: same columns, no point outside the sweep, and each
// point's swept values as the sweep file now gives them.
void check_resumable(const ResultsTable& previous, const ResultsTable& fresh, const sweep::SweepSpec& spec,
                     const std::string& out) {
  if (previous.columns() != fresh.columns())
    throw model::InputError(out, 0, "--resume", "its columns differ from this sweep's; not resuming into it");
  for (const auto& [point, row] : previous.rows()) {
    if (point < 0 || point >= static_cast<long long>(spec.points.size()))
      throw model::InputError(out, 0, "--resume",
                              "point " + std::to_string(point) + " is not a point of " + spec.file + " (it has " +
                                  std::to_string(spec.points.size()) + "); not resuming into it");
    for (const auto& [key, value] : spec.points[static_cast<size_t>(point)].values)
      if (previous.cell(point, key) != value)
        throw model::InputError(out, 0, "--resume",
                                "point " + std::to_string(point) + " has " + key + " = " + previous.cell(point, key) +
                                    ", the sweep file now says " + value + "; not resuming into it");
  }
}

} // namespace

int sweep_command(const SweepOptions& options) {
  sweep::SweepSpec spec;
  sweep::Shard shard;
  try {
    spec = sweep::load_sweep(options.file);
    shard = sweep::parse_shard(options.shard);
    output::check_output_target(options.out, "--out", {".csv", ".h5", ".hdf5"});
    if (output::same_file(options.out, options.file))
      throw model::InputError(options.out, 0, "--out", "is the sweep file itself");
    if (options.slurm.any()) {
      if (shard.count > 1)
        throw model::InputError("--shard", 0, "", "--slurm makes the shards itself (--shards M)");
      sweep::SlurmRequest request;
      request.command = "sweep";
      request.file = options.file;
      request.out = options.out;
      request.points = static_cast<long long>(spec.points.size());
      request.shards = options.slurm.shards;
      request.jobs_per_task = options.jobs;
      request.sbatch_args = options.slurm.sbatch_args;
      request.dry_run = options.slurm.dry_run;
      sweep::submit_to_slurm(request);
      return kExitOk;
    }
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitInternal;
  }
  ResultsTable results(result_columns(spec));
  if (options.resume && fs::exists(options.out)) {
    try {
      ResultsTable previous = sweep::load_results(options.out);
      check_resumable(previous, results, spec, options.out);
      results = previous;
    } catch (const std::exception& e) {
      std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
      return kExitBadInput;
    }
  }
  // This shard's points that still need a run; invalid points fail here, without a process.
  const auto& catalog = model::GpuCatalog::builtin();
  std::vector<sweep::PointJob> todo;
  long long skipped = 0, failed = 0;
  const size_t width = results.columns().size();
  for (const auto& p : spec.points) {
    if (!shard.has(p.index))
      continue;
    if (results.has_ok_row(p.index)) {
      ++skipped;
      continue;
    }
    const std::string label = spec.file + " point " + std::to_string(p.index);
    try {
      const model::InputNode point = model::InputNode::load_string(p.scenario_yaml, label);
      if (jobs_in(spec))
        sim::jobs::parse_jobs(point, catalog);
      else
        sim::parse_scenario(point, catalog);
    } catch (const model::InputError& raw) {
      const model::InputError e = sweep::locate_in_sweep(spec, p, raw);
      results.set_row(p.index, row_for(spec, p, width, e.what(), nullptr));
      std::cerr << "memwall: point " << p.index << " is invalid: " << memwall::model::printable_message(e.what()) << "\n";
      ++failed;
      continue;
    }
    todo.push_back({p.index, p.scenario_yaml, label});
  }
  if (skipped)
    std::cerr << "memwall: resuming: " << skipped << " point(s) already done in " << options.out << "\n";
  sweep::Progress progress(static_cast<long long>(todo.size()), ::isatty(STDERR_FILENO) != 0);
  try {
    sweep::save_results(results, options.out);
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitInternal;
  }
  const int stopped = sweep::run_points_reporting(
      todo, options.jobs, progress, "sweep", options.out,
      [&](const sweep::PointJob& job, const std::string& error, const nlohmann::json* record) {
        const sweep::SweepPoint& p = spec.points[static_cast<size_t>(job.index)];
        results.set_row(p.index, row_for(spec, p, width, error, record));
        sweep::save_results(results, options.out); // after every point, so an interrupted sweep can resume
        failed += error.empty() ? 0 : 1;
        progress.point_done(p.index, error.empty(), error);
      });
  if (stopped >= 0)
    return stopped;
  std::cerr << "memwall: sweep " << spec.file << ": " << todo.size() + static_cast<size_t>(skipped) << " point(s)"
            << (shard.count > 1 ? " in shard " + options.shard : "") << ", " << failed << " failed; results in "
            << options.out << "\n";
  if (spec.report.kind == "squeeze")
    sweep::print_squeeze_report(std::cout, results, spec.report.b_crit_tokens);
  return failed ? kExitInternal : kExitOk;
}

namespace {

// "3, 7-9, 12" (at most 20 runs of points, then how many more).
std::string point_list(const std::vector<long long>& points) {
  std::string text;
  size_t runs = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    size_t j = i;
    while (j + 1 < points.size() && points[j + 1] == points[j] + 1)
      ++j;
    if (++runs > 20) {
      text += ", ... (" + std::to_string(points.size()) + " in all)";
      break;
    }
    if (!text.empty())
      text += ", ";
    text += std::to_string(points[i]);
    if (j > i) {
      text += '-';
      text += std::to_string(points[j]);
    }
    i = j;
  }
  return text;
}

} // namespace

int merge_command(const MergeOptions& options) {
  const std::string& out = options.out;
  const std::vector<std::string>& inputs = options.inputs;
  ResultsTable merged;
  std::map<long long, std::string> source; // which file gave each point's row
  long long total = -1;                    // the sweep's point count, from the sweep_points column
  try {
    output::check_output_target(out, "--out", {".csv", ".h5", ".hdf5"});
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (output::same_file(out, inputs[i]))
        throw model::InputError(out, 0, "--out", "is also an input of the merge (" + inputs[i] + ")");
      ResultsTable t = sweep::load_results(inputs[i]);
      if (i == 0)
        merged = ResultsTable(t.columns());
      else if (t.columns() != merged.columns())
        throw std::runtime_error(inputs[i] + ": columns differ from " + inputs[0] + "'s");
      for (const auto& [point, row] : t.rows()) {
        const long long n = std::stoll(t.cell(point, "sweep_points"));
        if (total >= 0 && n != total)
          throw std::runtime_error(inputs[i] + ": point " + std::to_string(point) + " is from a sweep of " +
                                   std::to_string(n) + " points, others from one of " + std::to_string(total));
        total = n;
        if (point < 0 || point >= total)
          throw std::runtime_error(inputs[i] + ": point " + std::to_string(point) + " is outside its sweep of " +
                                   std::to_string(total) + " points");
        const bool ok = t.has_ok_row(point);
        if (merged.rows().count(point)) {
          const bool had_ok = merged.has_ok_row(point);
          if (had_ok && ok && merged.rows().at(point) != row)
            throw std::runtime_error("point " + std::to_string(point) + " has two different results, in " +
                                     source.at(point) + " and " + inputs[i] + "; not merging");
          if (had_ok || !ok)
            continue; // a successful run of a point wins over a failed one
        }
        merged.set_row(point, row);
        source[point] = inputs[i];
      }
    }
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  }
  std::vector<long long> missing, failed;
  for (long long p = 0; p < total; ++p)
    if (!merged.rows().count(p))
      missing.push_back(p);
    else if (!merged.has_ok_row(p))
      failed.push_back(p);
  try {
    sweep::save_results(merged, out);
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitInternal;
  }
  std::cerr << "memwall: merged " << merged.rows().size() << " of " << std::max(total, 0LL) << " point(s) from "
            << inputs.size() << " file(s) into " << out << "\n";
  // With the shard count, each missing or failed point's shard (SLURM array task) too.
  auto by_task = [&](const std::vector<long long>& points) {
    if (options.shards < 1)
      return point_list(points);
    std::string text;
    for (long long k = 1; k <= options.shards; ++k) {
      std::vector<long long> mine;
      for (long long p : points)
        if (p % options.shards == k - 1)
          mine.push_back(p);
      if (!mine.empty())
        text += (text.empty() ? "" : "; ") + std::string("task ") + std::to_string(k) + " of " +
                std::to_string(options.shards) + ": " + point_list(mine);
    }
    return text;
  };
  if (!missing.empty())
    std::cerr << "memwall: " << (options.allow_missing ? "warning" : "error") << ": " << missing.size()
              << " point(s) missing (no shard has them): " << by_task(missing) << "\n";
  if (!failed.empty())
    std::cerr << "memwall: " << (options.allow_missing ? "warning" : "error") << ": " << failed.size()
              << " point(s) failed: " << by_task(failed) << "\n";
  if ((!missing.empty() || !failed.empty()) && !options.allow_missing) {
    std::cerr << "memwall: `memwall sweep FILE --resume --out " << out << "` runs only those"
              << (options.shards > 0 ? " (or the --slurm command again, which submits only those tasks)" : "")
              << "; --allow-missing accepts a partial merge\n";
    return kExitInternal;
  }
  return kExitOk;
}

} // namespace memwall::cli
