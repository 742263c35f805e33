#include "commands.hpp"

#include "model/input_error.hpp"
#include "model/seed_table_layout.hpp"
#include "model/seed_tables.hpp"
#include "sim/engine/isolated_run.hpp"
#include "sim/jobs/jobs_spec.hpp"
#include "sim/output/safe_file.hpp"
#include "sim/output/result_json.hpp"
#include "sim/plan/plan_spec.hpp"
#include "sim/sweep/sweep_spec.hpp"

#include <algorithm>
#include <iostream>

#ifndef MEMWALL_SOURCE_DIR
#define MEMWALL_SOURCE_DIR "."
#endif

namespace memwall::cli {

std::string default_scenario_path() { return std::string(MEMWALL_SOURCE_DIR) + "/scenarios/worked-example"; }

namespace {

// The scenario files of a path; entries of a directory that are skipped (a symlink loop) are warned of.
std::vector<std::string> files_of(const std::string& path) {
  std::vector<std::string> skipped;
  auto files = sim::scenario_files(path, &skipped);
  for (const auto& s : skipped)
    std::cerr << "memwall: warning: " << s << "\n";
  return files;
}

// Loads every scenario first, so that bad input (or a plan that does not fit in memory) stops the
// run before anything is simulated.
std::vector<sim::Scenario> load_all(const std::vector<std::string>& paths, bool allow_oom) {
  const auto& catalog = model::GpuCatalog::builtin();
  std::vector<sim::Scenario> scenarios;
  for (const auto& path : paths)
    for (const auto& file : files_of(path)) {
      scenarios.push_back(sim::load_scenario(file, catalog));
      sim::check_memory(scenarios.back(), allow_oom);
      for (const auto& warning : scenarios.back().warnings)
        std::cerr << "memwall: warning: " << warning << "\n";
    }
  return scenarios;
}

// After the seed's Table 5 columns: the step time, throughput, model and hardware FLOPs utilisation.
const std::string kRunColumnsHeader = model::format(" %9s %10s %6s %6s", "step s", "tok/s/GPU", "MFU%", "HFU%");

// The table row, flagged when the plan does not fit in HBM.
std::string table_row(const sim::Scenario& s, const nlohmann::json& record) {
  std::string row = model::table5_row(s.name, sim::metrics_from_json(record)) +
                    model::format(" %9.4g %10.1f %6.1f %6.1f", record["step_time_s"].get<double>(),
                                  record["tokens_per_s_per_gpu"].get<double>(), 100 * record["mfu"].get<double>(),
                                  100 * record["hfu"].get<double>());
  if (record.value("oom", false))
    row += model::format("  [OOM %.1f GB > %.1f GB]", record["footprint_bytes"].get<double>() / 1e9,
                         record["hbm_capacity_bytes"].get<double>() / 1e9);
  // Power beyond the seed's columns, when the scenario asks for any of it (the seed's rows stay as
  // they are): facility energy per token, a server's mean power, the cap's lowest clock; a run's budget.
  if (s.power.given() || s.gpu.power_limit_w > 0)
    row += model::format("  [facility %.2f mJ/token, node %.2f kW mean %.2f kW peak",
                         record["facility_mj_per_token"].get<double>(),
                         record["node_power_mean_w"].get<double>() / 1e3,
                         record["node_power_peak_w"].get<double>() / 1e3) +
           (s.gpu.power_limit_w > 0 ? model::format(", %.0f W cap: clock >= %.3f", s.gpu.power_limit_w,
                                                    record["gpu_clock_min"].get<double>())
                                    : std::string()) +
           "]";
  if (s.run.given())
    row += model::format("  [run %.1f days, %.0f GPU-h, %.1f MWh, cost %.0f, %.1f t CO2e]",
                         record["run_days"].get<double>(), record["run_gpu_hours"].get<double>(),
                         record["run_facility_mwh"].get<double>(), record["run_cost"].get<double>(),
                         record["run_co2_t"].get<double>());
  if (record.contains("goodput_detail")) { // failures, checkpoints and restarts over the whole run
    const nlohmann::json& g = record["goodput_detail"];
    if (g["unfinished_seeds"].get<long long>() > 0)
      row += model::format("  [%lld seeds did not finish within %.0f x the failure-free time: days are a lower bound]",
                           g["unfinished_seeds"].get<long long>(), model::kRunCapFactor);
    row += model::format("  [goodput %.1f%% (P10 %.1f%%), %.0f interruptions, checkpoint every %.0f s, ",
                         100 * g["goodput_mean"].get<double>(), 100 * g["goodput_p10"].get<double>(),
                         g["interruptions_mean"].get<double>(), g["checkpoint_interval_s"].get<double>()) +
           (s.run.duration_s > 0 ? model::format("%.0f steps kept in %.1f days]", g["steps_kept_mean"].get<double>(),
                                                 g["days_mean"].get<double>())
                                 : model::format("%.1f days (P50 %.1f, P90 %.1f)]", g["days_mean"].get<double>(),
                                                 g["days_p50"].get<double>(), g["days_p90"].get<double>()));
  }
  return row;
}

// A GPU whose phases draw more than its board power with no cap set: the seed's energies allow it
// (near the ridge point), a real GPU would throttle.
void warn_power(const sim::Scenario& s, const nlohmann::json& record) {
  const double peak_w = record["gpu_power_peak_w"].get<double>();
  if (s.gpu.power_limit_w <= 0 && peak_w > s.gpu.tdp_w * (1 + 1e-9))
    std::cerr << "memwall: warning: " << s.file << ": " << s.gpu.name << " phases draw up to "
              << model::format("%.0f W", peak_w) << ", above its board power (tdp " << model::format("%.0f W", s.gpu.tdp_w)
              << "); set gpu.power_limit: tdp to run them at the clock that meets it\n";
  if (record["over_limit_phases"].get<double>() > 0)
    std::cerr << "memwall: warning: " << s.file << ": " << record["over_limit_phases"].get<double>()
              << " phases draw more than the power limit even at the lowest clock (HBM and static power alone)\n";
}

} // namespace

// `--breakdown`: where the step's seconds went, in the order of --json's breakdown object.
const char* const kBreakdownMembers[] = {"compute_s",   "tp_s", "cp_s",        "ep_s",  "pp_transfer_s",
                                         "pp_bubble_s", "dp_s", "optimizer_s", "wait_s"};

std::string breakdown_header() {
  return model::format("%-40s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s", "scenario", "step s", "compute", "TP", "CP",
                       "EP", "PP xfer", "bubble", "DP", "optimizer", "wait");
}

std::string breakdown_row(const std::string& name, const nlohmann::json& record) {
  std::string row = model::format("%-40s %9.4g", name.c_str(), record["step_time_s"].get<double>());
  for (const char* key : kBreakdownMembers)
    row += model::format(" %9.4g", record["breakdown"][key].get<double>());
  return row;
}

int run_command(const RunOptions& options) {
  std::vector<sim::Scenario> scenarios;
  std::vector<std::string> jobs_files; // several jobs on one fabric (sim/jobs): run after the scenarios
  std::vector<sim::jobs::JobsSpec> jobs_specs;
  try {
    std::vector<std::string> files;
    for (const auto& path : options.paths.empty() ? std::vector<std::string>{default_scenario_path()} : options.paths)
      for (const auto& file : files_of(path))
        (sim::jobs::is_jobs_file(file) ? jobs_files : files).push_back(file);
    for (const auto& file : jobs_files) { // bad input stops the run before anything is simulated
      jobs_specs.push_back(sim::jobs::load_jobs(file, model::GpuCatalog::builtin()));
      for (const sim::jobs::Job& job : jobs_specs.back().jobs)
        sim::check_memory(job.scenario, options.allow_oom);
      for (const auto& warning : jobs_specs.back().warnings)
        std::cerr << "memwall: warning: " << warning << "\n";
    }
    scenarios = load_all(files, options.allow_oom);
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  }
  sim::OutputOptions output;
  try {
    output.trace_path = options.trace_path;
    output.timeline_path = options.timeline_path;
    output.timeline_gpus = options.timeline_gpus;
    output.trace_level = trace::parse_trace_level(options.trace_level);
  } catch (const std::invalid_argument& e) {
    std::cerr << "memwall: error: --trace-level: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  }
  try { // a bad output path is bad input, found before anything is simulated
    if (!output.trace_path.empty())
      output::check_output_target(output.trace_path, "--trace", {".h5", ".hdf5"});
    if (!output.timeline_path.empty())
      output::check_output_target(output.timeline_path, "--timeline", {".json"});
    std::vector<std::string> inputs = jobs_files;
    for (const auto& s : scenarios)
      inputs.push_back(s.file);
    for (const auto& input : inputs)
      for (const std::string* target : {&output.trace_path, &output.timeline_path})
        if (!target->empty() && output::same_file(*target, input))
          throw model::InputError(*target, 0, "--trace", "is the scenario file itself");
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  }
  if (output.tracing() && scenarios.size() + jobs_files.size() != 1) {
    std::cerr << "memwall: error: --trace and --timeline take exactly one scenario or jobs file (got "
              << scenarios.size() + jobs_files.size() << ")\n";
    return kExitBadInput;
  }
  int code = kExitOk;
  bool header_printed = false; // with the first result: a run that fails prints no table at all
  for (const auto& s : scenarios) {
    try {
      const nlohmann::json record = sim::run_isolated(s, output);
      warn_power(s, record);
      if (options.json)
        std::cout << record.dump() << "\n";
      else if (options.breakdown) {
        if (!header_printed)
          std::cout << breakdown_header() << "\n";
        header_printed = true;
        std::cout << breakdown_row(s.name, record) << "\n";
      } else {
        if (!header_printed)
          std::cout << model::table5_header() << kRunColumnsHeader << "\n";
        header_printed = true;
        std::cout << table_row(s, record) << "\n";
      }
      std::cout.flush();
    } catch (const std::exception& e) {
      std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
      code = kExitInternal;
    }
  }
  for (const auto& spec : jobs_specs) {
    if (header_printed && !options.json)
      std::cout << "\n";
    header_printed = true;
    code = std::max(code, jobs_command(spec, options, output));
  }
  return code;
}

int validate_command(const std::vector<std::string>& paths) {
  try {
    // Sweep files (a top-level `sweep:`) are checked point by point, as `memwall sweep` would.
    std::vector<std::string> scenario_paths;
    std::vector<std::string> lines;
    for (const auto& path : paths)
      for (const auto& file : files_of(path)) {
        const model::InputNode root = model::InputNode::load_file(file);
        if (root.is_map() && root.has("jobs")) {
          const sim::jobs::JobsSpec spec = sim::jobs::load_jobs(file, model::GpuCatalog::builtin());
          for (const sim::jobs::Job& job : spec.jobs) // as `run` checks them
            sim::check_memory(job.scenario, false);
          lines.push_back(file + ": ok (" + std::to_string(spec.jobs.size()) + " jobs on " +
                          std::to_string(spec.gpus) + " GPUs; run it with memwall run)");
          continue;
        }
        if (root.is_map() && !root.has("sweep") && (root.has("base") || root.has("search"))) {
          const plan::PlanSpec spec = plan::load_plan(file); // the file itself; `plan` checks each layout
          lines.push_back(file + ": ok (plan of " + std::to_string(spec.candidates()) + " layouts on " +
                          std::to_string(spec.fabrics.size()) + " fabric(s); run it with memwall plan)");
          continue;
        }
        if (!root.is_map() || !root.has("sweep")) {
          scenario_paths.push_back(file);
          continue;
        }
        const sweep::SweepSpec spec = sweep::load_sweep(file);
        for (const auto& p : spec.points)
          try {
            const model::InputNode point = model::InputNode::load_string(p.scenario_yaml, file);
            if (point.is_map() && point.has("jobs"))
              sim::jobs::parse_jobs(point, model::GpuCatalog::builtin());
            else
              sim::parse_scenario(point, model::GpuCatalog::builtin());
          } catch (const model::InputError& e) {
            throw sweep::locate_in_sweep(spec, p, e);
          }
        lines.push_back(file + ": ok (sweep of " + std::to_string(spec.points.size()) + " points)");
      }
    for (const auto& s : load_all(scenario_paths, false))
      std::cout << s.file << ": ok (" << s.name << ", " << s.gpus << " x " << s.gpu.name << ")\n";
    for (const auto& line : lines)
      std::cout << line << "\n";
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

} // namespace memwall::cli
