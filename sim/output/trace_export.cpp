#include "sim/output/trace_export.hpp"

#include "sim/output/result_json.hpp"
#include "topologies/fabric_loader.hpp"
#include "trace/hdf5_trace_writer.hpp"
#include "trace/timeline_writer.hpp"

#include <simgrid/s4u/Engine.hpp> // defines what simgrid/version.h needs
#include <simgrid/version.h>

#include <algorithm>
#include <cstdio>

#ifndef MEMWALL_VERSION
#define MEMWALL_VERSION "unknown"
#endif

namespace memwall::sim {

namespace {

double union_length(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, start = 0, end = -1;
  for (const auto& [a, b] : intervals) {
    if (a > end) {
      total += std::max(0.0, end - start);
      start = a;
      end = b;
    } else {
      end = std::max(end, b);
    }
  }
  return total + std::max(0.0, end - start);
}

std::vector<trace::GpuSummaryRow> per_gpu_rows(const Scenario& s, const RunResult& r) {
  std::vector<trace::GpuSummaryRow> rows;
  for (size_t g = 0; g < r.per_gpu.size(); ++g) {
    const GpuTotals& t = r.per_gpu[g];
    trace::GpuSummaryRow row;
    row.gpu = static_cast<int32_t>(g);
    row.t_compute_s = t.compute_time_s();
    row.t_allreduce_s = t.time_s(PhaseKind::AllReduce);
    row.t_optimizer_s = t.time_s(PhaseKind::Optimizer);
    row.t_wait_s = r.makespan_s - t.finish_time_s;
    row.flops = t.flops;
    row.hbm_bytes = t.hbm_bytes;
    row.bytes_sent = t.bytes_sent;
    row.bytes_received = t.bytes_received;
    row.e_arith_j = t.e_arith_j;
    row.e_hbm_j = t.e_hbm_j;
    row.e_static_j = model::awake_power_w(s.gpu) * r.makespan_s;
    row.e_network_j = t.e_network_j;
    row.e_total_j = row.e_arith_j + row.e_hbm_j + row.e_static_j + row.e_network_j;
    rows.push_back(row);
  }
  return rows;
}

} // namespace

trace::TraceContents trace_contents(const Scenario& s, const RunResult& r, const RunRecorder& recorder,
                                    const trace::TraceBuffer& trace, const OutputOptions& output) {
  const model::MemoryFootprint footprint = scenario_footprint(s);
  trace::TraceContents c;
  c.text_attributes = {
      {"memwall_version", MEMWALL_VERSION},
      {"simgrid_version", SIMGRID_VERSION_STRING},
      {"scenario_name", s.name},
      {"scenario_file", s.file},
      {"scenario_yaml", s.yaml_text},
      {"gpu", s.gpu.name},
      {"fabric", topologies::describe_fabric(s.fabric)},
      {"options", std::string("trace_level=") + trace::trace_level_name(output.trace_level)},
      {"oom", footprint.fits() ? "false" : "true"},
      {"memory", footprint.describe()}};
  const nlohmann::json record = result_to_json(s, r);
  if (record.contains("parallelism")) // the layout and per-stage breakdown, as JSON text
    c.text_attributes["parallelism"] = record["parallelism"].dump();
  for (const auto& [key, value] : record.items()) {
    if (value.is_number())
      c.summary_numbers[key] = value.get<double>();
    else if (value.is_string())
      c.summary_texts[key] = value.get<std::string>();
    else if (value.is_boolean())
      c.summary_texts[key] = value.get<bool>() ? "true" : "false";
  }
  for (const auto& [key, value] : record.at("breakdown").items()) // as the results files' columns
    c.summary_numbers["breakdown_" + key] = value.get<double>();
  c.phases = &trace.phases();
  c.comms = &trace.comms();
  for (const auto& [name, use] : recorder.links())
    if (use.bytes > 0)
      c.links.push_back({name, use.kind, use.bandwidth_bytes_per_s, use.bytes, union_length(use.intervals),
                         use.bytes * use.j_per_byte});
  std::sort(c.links.begin(), c.links.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  c.per_gpu = per_gpu_rows(s, r);
  c.power = trace::power_rows(trace.phases());
  {
    const long long servers = std::max<long long>(1, s.inventory.servers);
    const double base_w = model::host_and_nics_w_per_server(s.power, s.inventory);
    c.server_power = trace::server_power_rows(c.power, s.gpus / servers, servers, base_w,
                                              s.power.psu_efficiency, false);
    c.job_power = trace::server_power_rows(c.power, s.gpus / servers, servers, base_w,
                                           s.power.psu_efficiency, true);
  }
  if (s.checkpoint.write_bytes_per_s > 0) { // the first seed's run, event by event
    std::vector<model::RunEvent> events;
    scenario_goodput(s, goodput_inputs(s, record), &events);
    for (const model::RunEvent& e : events) {
      trace::RunEventRow row{};
      std::snprintf(row.event, sizeof row.event, "%s", model::event_name(e.kind));
      if (e.failure >= 0)
        std::snprintf(row.failure, sizeof row.failure, "%s", s.reliability.kinds[size_t(e.failure)].name.c_str());
      row.t_s = e.t_s;
      row.steps_kept = e.steps_kept;
      row.lost_s = e.lost_s;
      c.run_events.push_back(row);
    }
    c.run_seed = double(s.reliability.seed);
  }
  return c;
}

void export_trace(const Scenario& s, const RunResult& r, const RunRecorder& recorder,
                  const trace::TraceBuffer& trace, const OutputOptions& output) {
  if (!output.trace_path.empty())
    trace::write_hdf5_trace(output.trace_path, trace_contents(s, r, recorder, trace, output));
  if (!output.timeline_path.empty())
    trace::write_timeline(output.timeline_path, trace.phases(), trace.comms(), output.timeline_gpus);
}

} // namespace memwall::sim
