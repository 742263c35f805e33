// `memwall run JOBS.yaml`: several jobs on one fabric (sim/jobs). One row per job (its step time
// together and alone, the slowdown) and the cluster's summary.
#include "commands.hpp"

#include "model/input_error.hpp"
#include "model/seed_tables.hpp"
#include "sim/jobs/jobs_run.hpp"

#include <iostream>

namespace memwall::cli {

namespace {

// A job's servers, short: runs of consecutive servers as a-b, cut after `width` characters.
std::string server_list(const std::vector<long long>& servers, size_t width = 22) {
  std::string text;
  for (size_t i = 0; i < servers.size();) {
    size_t j = i;
    while (j + 1 < servers.size() && servers[j + 1] == servers[j] + 1)
      ++j;
    if (!text.empty())
      text += ',';
    text += std::to_string(servers[i]);
    if (j > i)
      text += '-' + std::to_string(servers[j]);
    i = j + 1;
  }
  return text.size() > width ? text.substr(0, width - 3) + "..." : text;
}

} // namespace

int jobs_command(const sim::jobs::JobsSpec& spec, const RunOptions& options, const sim::OutputOptions& output) {
  nlohmann::json out;
  try {
    out = sim::jobs::run_jobs_with_baselines(spec, output);
  } catch (const std::exception& e) {
    std::cerr << "memwall: error: " << model::printable_message(e.what()) << "\n";
    return kExitInternal;
  }
  if (options.json) {
    std::cout << out.dump() << "\n";
    return kExitOk;
  }
  std::cout << model::format("%s: %zu jobs on %s (%lld GPUs, %lld servers of %lld)\n", spec.name.c_str(),
                             spec.jobs.size(), spec.fabric.name.c_str(), spec.gpus,
                             spec.gpus / spec.gpus_per_server, spec.gpus_per_server);
  if (options.breakdown) { // each job's step breakdown, as a scenario's
    std::cout << breakdown_header() << "\n";
    for (size_t j = 0; j < spec.jobs.size(); ++j)
      std::cout << breakdown_row(spec.jobs[j].scenario.name, out["jobs"][j]) << "\n";
    return kExitOk;
  }
  std::cout << model::format("%-24s %6s %-9s %-22s %8s %10s %10s %8s %10s\n", "job", "GPUs", "placement",
                             "servers", "start s", "step s", "alone s", "slowdown", "tok/s/GPU");
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    const nlohmann::json& r = out["jobs"][j];
    const sim::jobs::Job& job = spec.jobs[j];
    std::cout << model::format(
        "%-24s %6lld %-9s %-22s %8.4g %10.4g %10.4g %8.3f %10.1f\n", job.scenario.name.c_str(),
        job.scenario.gpus, sim::jobs::placement_name(job.placement), server_list(job.servers).c_str(),
        job.start_s, r["step_time_s"].get<double>(), r["alone_step_time_s"].get<double>(),
        r["slowdown"].get<double>(), r["tokens_per_s_per_gpu"].get<double>());
  }
  const nlohmann::json& c = out["cluster"];
  std::cout << model::format(
      "cluster: %.0f of %lld GPUs busy, %.4g tokens/s, GPU energy %.4g J, last job ends at %.4g s\n",
      c["gpus_busy"].get<double>(), spec.gpus, c["tokens_per_s"].get<double>(),
      c["gpu_energy_j"].get<double>(), c["makespan_s"].get<double>());
  return kExitOk;
}

} // namespace memwall::cli
