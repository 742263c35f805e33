#include "sim/jobs/jobs_trace.hpp"

#include "model/input_node.hpp"
#include "sim/output/result_json.hpp"
#include "sim/output/trace_export.hpp"
#include "topologies/fabric_loader.hpp"
#include "trace/hdf5_trace_writer.hpp"
#include "trace/timeline_writer.hpp"

#include <algorithm>
#include <set>

namespace memwall::sim::jobs {

nlohmann::json cluster_figures(const JobsSpec& spec, const std::vector<size_t>& which,
                               const std::vector<nlohmann::json>& records) {
  double busy_gpus = 0, tokens_per_s = 0, energy_j = 0, end_s = 0;
  for (size_t i = 0; i < which.size(); ++i) {
    const Job& job = spec.jobs[which[i]];
    const nlohmann::json& r = records[i];
    const double gpus = double(job.scenario.gpus), steps = double(job.scenario.steps);
    busy_gpus += gpus;
    tokens_per_s += r["tokens_per_s_per_gpu"].get<double>() * gpus;
    energy_j += r["energy_j"].get<double>() * gpus * steps; // per GPU per step
    end_s = std::max(end_s, job.start_s + r["step_time_s"].get<double>() * steps);
  }
  return {{"gpus_busy", busy_gpus},
          {"gpus", spec.gpus},
          {"tokens_per_s", tokens_per_s},
          {"gpu_energy_j", energy_j},
          {"makespan_s", end_s}};
}

void export_jobs_trace(const JobsSpec& spec, const std::vector<JobTrace>& jobs, const OutputOptions& output) {
  std::vector<trace::PhaseRow> phases;
  std::vector<trace::CommRow> comms;
  trace::TraceContents all;
  std::vector<std::string> names(spec.jobs.size());
  std::vector<size_t> which;
  std::vector<nlohmann::json> records;
  std::set<std::string> gpus;
  std::string memory, memwall_version, simgrid_version;
  bool oom = false;
  for (const JobTrace& j : jobs) {
    const Scenario& s = spec.jobs[j.job].scenario;
    const auto id = static_cast<int32_t>(j.job);
    names[j.job] = s.name;
    which.push_back(j.job);
    records.push_back(result_to_json(s, *j.result));
    gpus.insert(s.gpu.name);
    const trace::TraceContents c = trace_contents(s, *j.result, *j.recorder, *j.trace, output);
    memory += (memory.empty() ? "" : "; ") + s.name + ": " + c.text_attributes.at("memory");
    oom = oom || c.text_attributes.at("oom") == "true";
    memwall_version = c.text_attributes.at("memwall_version");
    simgrid_version = c.text_attributes.at("simgrid_version");
    for (trace::PhaseRow row : *c.phases) {
      row.job = id;
      phases.push_back(row);
    }
    for (trace::CommRow row : *c.comms) {
      row.job = id;
      comms.push_back(row);
    }
    auto add = [id](auto& into, const auto& rows) {
      for (auto row : rows) {
        row.job = id;
        into.push_back(row);
      }
    };
    add(all.links, c.links);
    add(all.per_gpu, c.per_gpu);
    add(all.power, c.power);
    add(all.server_power, c.server_power);
    add(all.job_power, c.job_power);
  }
  std::string gpu_names;
  for (const auto& g : gpus)
    gpu_names += (gpu_names.empty() ? "" : ", ") + g;
  nlohmann::json placed = nlohmann::json::array();
  for (const JobTrace& j : jobs) {
    const Job& job = spec.jobs[j.job];
    placed.push_back({{"job", job.scenario.name},
                      {"index", j.job},
                      {"gpus", job.scenario.gpus},
                      {"placement", placement_name(job.placement)},
                      {"servers", job.servers},
                      {"start_s", job.start_s}});
  }
  all.text_attributes = {
      {"memwall_version", memwall_version},
      {"simgrid_version", simgrid_version},
      {"scenario_name", spec.name},
      {"scenario_file", spec.file},
      {"scenario_yaml", model::InputNode::read_text_file(spec.file)},
      {"gpu", gpu_names},
      {"fabric", topologies::describe_fabric(spec.fabric)},
      {"options", std::string("trace_level=") + trace::trace_level_name(output.trace_level)},
      {"oom", oom ? "true" : "false"},
      {"memory", memory},
      {"jobs", placed.dump()}};
  const nlohmann::json cluster = cluster_figures(spec, which, records);
  for (const auto& [key, value] : cluster.items())
    all.summary_numbers[key] = value.get<double>();
  all.summary_texts["jobs"] =
      nlohmann::json(records).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  all.phases = &phases;
  all.comms = &comms;
  if (!output.trace_path.empty())
    trace::write_hdf5_trace(output.trace_path, all);
  if (!output.timeline_path.empty())
    trace::write_timeline(output.timeline_path, phases, comms, output.timeline_gpus, names);
}

} // namespace memwall::sim::jobs
