#include "sim/output/result_json.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace memwall::sim {

namespace {

// One table of (JSON key, StepMetrics field) so that writing and reading cannot drift apart.
struct MetricField {
  const char* key;
  double model::StepMetrics::*field;
};
constexpr MetricField kMetricFields[] = {
    {"params", &model::StepMetrics::params},
    {"tokens_per_gpu", &model::StepMetrics::tokens_per_gpu},
    {"step_time_s", &model::StepMetrics::step_time_s},
    {"t_compute_s", &model::StepMetrics::t_compute_s},
    {"t_allreduce_s", &model::StepMetrics::t_allreduce_s},
    {"t_optimizer_s", &model::StepMetrics::t_optimizer_s},
    {"t_comm_total_s", &model::StepMetrics::t_comm_total_s},
    {"flops", &model::StepMetrics::flops},
    {"hbm_bytes", &model::StepMetrics::hbm_bytes},
    {"ms_per_token", &model::StepMetrics::ms_per_token},
    {"energy_j", &model::StepMetrics::energy_j},
    {"e_arith_j", &model::StepMetrics::e_arith_j},
    {"e_hbm_j", &model::StepMetrics::e_hbm_j},
    {"e_static_j", &model::StepMetrics::e_static_j},
    {"e_network_j", &model::StepMetrics::e_network_j},
    {"mj_per_token", &model::StepMetrics::mj_per_token},
    {"arith_pct", &model::StepMetrics::arith_pct},
    {"hbm_pct", &model::StepMetrics::hbm_pct},
    {"static_pct", &model::StepMetrics::static_pct},
    {"network_pct", &model::StepMetrics::network_pct},
    {"intensity", &model::StepMetrics::intensity_flops_per_byte},
    {"slowdown", &model::StepMetrics::slowdown},
};

// The layout and where each stage's time went, per GPU per step (means over the stage's GPUs):
// compute, TP collectives, waits for the neighbouring stage (bubble and transfers not hidden),
// data-parallel gradient sync, optimizer.
nlohmann::json parallel_breakdown(const Scenario& s, const RunResult& r) {
  const model::ParallelLayout& l = s.layout;
  nlohmann::json p;
  p["tensor"] = l.tensor;
  p["sequence_parallel"] = l.sequence_parallel;
  p["pipeline"] = l.pipeline;
  p["virtual_stages"] = l.virtual_stages;
  p["schedule"] = l.gpipe ? "gpipe" : (l.virtual_stages > 1 ? "interleaved-1f1b" : "1f1b");
  p["context"] = l.context;
  p["expert"] = l.expert;
  p["expert_tensor_parallel"] = l.expert_tensor_degree();
  p["data"] = l.data;
  p["stage_layers"] = l.stage_layers;
  std::vector<std::string> placement;
  for (model::Axis axis : l.placement)
    placement.emplace_back(model::axis_name(axis));
  p["placement"] = placement;
  const double steps = double(s.steps);
  std::vector<std::array<double, 7>> stage(size_t(l.pipeline), std::array<double, 7>{});
  std::vector<double> count(size_t(l.pipeline), 0.0);
  std::array<double, 7> all{};
  for (size_t rank = 0; rank < r.per_gpu.size(); ++rank) {
    const GpuTotals& g = r.per_gpu[rank];
    const std::array<double, 7> v{g.compute_time_s(), g.tp_comm_s, g.pp_wait_s, g.dp_comm_s,
                                  g.time_s(PhaseKind::Optimizer), g.ep_comm_s, g.cp_comm_s};
    const auto st = size_t(model::coords_of(l, static_cast<long long>(rank)).pipeline);
    for (size_t k = 0; k < v.size(); ++k) {
      stage[st][k] += v[k] / steps;
      all[k] += v[k] / steps / double(r.per_gpu.size());
    }
    count[st] += 1;
  }
  // The GPU that computed longest (a hot expert's, a straggler's) and how long.
  size_t busiest = 0;
  for (size_t rank = 1; rank < r.per_gpu.size(); ++rank)
    if (r.per_gpu[rank].compute_time_s() > r.per_gpu[busiest].compute_time_s())
      busiest = rank;
  p["busiest_gpu"] = busiest;
  p["t_compute_max_s"] = r.per_gpu.empty() ? 0.0 : r.per_gpu[busiest].compute_time_s() / steps;
  static const char* const keys[] = {"t_compute_s",   "t_tp_comm_s", "t_pp_wait_s",
                                     "t_dp_comm_s",   "t_optimizer_s", "t_ep_comm_s", "t_cp_comm_s"};
  for (size_t k = 0; k < all.size(); ++k)
    p[keys[k]] = all[k];
  nlohmann::json stages = nlohmann::json::array();
  for (size_t st = 0; st < stage.size(); ++st) {
    nlohmann::json e;
    e["stage"] = st;
    e["layers"] = l.stage_layers[st];
    for (size_t k = 0; k < all.size(); ++k)
      e[keys[k]] = count[st] > 0 ? stage[st][k] / count[st] : 0.0;
    const model::MemoryFootprint memory = stage_memory(s, static_cast<long long>(st));
    e["footprint_bytes"] = memory.total_bytes;
    e["activation_bytes"] = memory.activation_bytes;
    stages.push_back(e);
  }
  p["stages"] = stages;
  return p;
}

// Where each second of the step went, per GPU per step, as means over the GPUs. Every GPU's compute
// stream is in exactly one of these at any time until its end, and waits for the last GPU after it, so
// the members sum to the step time (a conservation check: tests/check_breakdown.py). Exposed
// communication only: what ran beside the compute is in none of them.
struct BreakdownMember {
  const char* key;
  double (*of)(const GpuTotals&);
};
const BreakdownMember kBreakdownMembers[] = {
      {"compute_s", [](const GpuTotals& g) { return g.compute_time_s(); }},
      {"tp_s", [](const GpuTotals& g) { return g.tp_comm_s; }},
      {"cp_s", [](const GpuTotals& g) { return g.cp_comm_s; }},
      {"ep_s", [](const GpuTotals& g) { return g.ep_comm_s; }},
      {"pp_transfer_s", [](const GpuTotals& g) { return g.pp_transfer_s; }},
      {"pp_bubble_s", [](const GpuTotals& g) { return g.pp_bubble_s; }},
      {"dp_s", [](const GpuTotals& g) { return g.dp_comm_s; }},
    {"optimizer_s", [](const GpuTotals& g) { return g.time_s(PhaseKind::Optimizer); }},
};

nlohmann::json step_breakdown(const Scenario& s, const RunResult& r) {
  const double gpus_steps = double(std::max<size_t>(1, r.per_gpu.size())) * double(s.steps);
  nlohmann::json b = nlohmann::json::object();
  for (const BreakdownMember& m : kBreakdownMembers) {
    double sum = 0;
    for (const GpuTotals& g : r.per_gpu)
      sum += m.of(g);
    b[m.key] = sum / gpus_steps;
  }
  // After a GPU's own end, until the last GPU's. With a pipeline that is its drain: the last stages
  // finish their backwards first (1F1B: (p - 1) slots of fill and drain per stage, the bubble); else
  // the wait for the slowest GPU (stragglers, hot experts, uneven links).
  double tail = 0;
  for (const GpuTotals& g : r.per_gpu)
    tail += r.makespan_s - g.finish_time_s;
  const bool pipelined = s.layout.pipeline > 1;
  double sync = 0; // inside collectives, until the group's last member arrived
  for (const GpuTotals& g : r.per_gpu)
    sync += g.sync_wait_s;
  b["pp_bubble_s"] = b["pp_bubble_s"].get<double>() + (pipelined ? tail / gpus_steps : 0.0);
  b["wait_s"] = (sync + (pipelined ? 0.0 : tail)) / gpus_steps;
  return b;
}

double finite_or_zero(double x) { return std::isfinite(x) ? x : 0.0; }

// A whole run with failures, checkpoints and restarts (`reliability:`, `checkpoint:`; issue 31): flat
// keys (zeros without) for sweeps and plans, and a `goodput` object with the rest.
void goodput_figures(const Scenario& s, nlohmann::json& j) {
  model::GoodputReport g;
  if (s.checkpoint.write_bytes_per_s > 0) {
    GoodputCurves curves;
    g = scenario_goodput(s, goodput_inputs(s, j), nullptr, &curves);
    auto curve_json = [](const std::vector<model::CurvePoint>& points, const char* x) {
      nlohmann::json a = nlohmann::json::array();
      for (const model::CurvePoint& p : points)
        a.push_back({{x, p.x}, {"goodput", p.goodput}, {"days", p.days}});
      return a;
    };
    nlohmann::json kinds = nlohmann::json::array();
    for (size_t k = 0; k < s.reliability.kinds.size(); ++k) {
      const model::FailureKind& kind = s.reliability.kinds[k];
      kinds.push_back({{"kind", kind.name},
                       {"devices", kind.devices},
                       {"per_device_hour", kind.per_device_hour},
                       {"effect", kind.effect == model::FailureEffect::Restart   ? "restart"
                                  : kind.effect == model::FailureEffect::Reroute ? "reroute"
                                                                                 : "slow"},
                       {"failures_mean", g.by_kind_mean[k]}});
    }
    std::vector<double> days = g.days, goodputs = g.goodputs;
    if (days.size() > 1000) { // the distributions' shape, not every seed
      days.resize(1000);
      goodputs.resize(1000);
    }
    j["goodput_detail"] = {{"seeds", s.reliability.seeds},
                           {"checkpoint_bytes", s.checkpoint.bytes},
                           {"checkpoint_mode", s.checkpoint.async ? "async" : "sync"},
                           {"checkpoint_write_s", g.checkpoint_write_s},
                           {"checkpoint_blocking_s", g.checkpoint_blocking_s},
                           {"checkpoint_read_s", g.checkpoint_read_s},
                           {"checkpoint_interval_s", finite_or_zero(g.interval_s)},
                           {"checkpoint_interval_steps", finite_or_zero(g.interval_steps)},
                           {"checkpoint_interval_optimal", s.checkpoint.interval_s <= 0},
                           {"young_interval_s", finite_or_zero(g.young_interval_s)},
                           {"mtbf_s", finite_or_zero(g.mtbf_s)},
                           {"interruptions_mean", g.interruptions_mean},
                           {"interruptions_sem", g.interruptions_sem},
                           {"degraded_mean", g.degraded_mean},
                           {"goodput_mean", g.goodput_mean},
                           {"goodput_p10", g.goodput_p10},
                           {"goodput_p50", g.goodput_p50},
                           {"days_mean", g.days_mean},
                           {"days_p50", g.days_p50},
                           {"days_p90", g.days_p90},
                           {"steps_kept_mean", g.steps_mean},
                           {"unfinished_seeds", g.unfinished_seeds},
                           {"gpu_hours_mean", g.gpu_hours_mean},
                           {"facility_mwh_mean", g.energy_mwh_mean},
                           {"cost_mean", g.gpu_hours_mean * s.run.gpu_hour_price +
                                             g.energy_mwh_mean * 1000 * s.run.kwh_price},
                           {"lost_hours_mean", g.lost_h_mean},
                           {"down_hours_mean", g.down_h_mean},
                           {"checkpoint_wait_hours_mean", g.checkpoint_h_mean},
                           {"failures", kinds},
                           {"curve_interval", curve_json(curves.by_interval, "interval_s")},
                           {"curve_gpus", curve_json(curves.by_size, "gpus")},
                           {"days", days},
                           {"goodput_seeds", goodputs}};
  }
  j["goodput"] = g.goodput_mean;
  j["interruptions"] = g.interruptions_mean;
  j["checkpoint_interval_s"] = finite_or_zero(g.interval_s);
  j["run_days_with_failures"] = g.days_mean;
  j["run_days_with_failures_p90"] = g.days_p90;
}

// Power at GPU, node and facility level for one step, and the training run's projection (zeros
// without `run:`), as flat keys so that sweeps and plans carry them as columns.
void power_figures(const Scenario& s, const RunResult& r, nlohmann::json& j) {
  const model::StepMetrics& m = r.metrics;
  double peak_w = 0, min_clock = 1, throttled_s = 0;
  long long over_limit = 0;
  for (const auto& g : r.per_gpu) {
    peak_w = std::max(peak_w, g.peak_power_w);
    min_clock = std::min(min_clock, g.min_clock);
    throttled_s += g.throttled_s;
    over_limit += g.over_limit_phases;
  }
  const double gpu_j = m.e_arith_j + m.e_hbm_j + m.e_static_j; // per GPU per step
  const model::FacilityStep f =
      model::facility_step(s.power, s.inventory, s.gpus, m.step_time_s, gpu_j, m.e_network_j, peak_w);
  const double tokens_per_step = m.tokens_per_gpu * double(s.gpus);
  j["power_limit_w"] = s.gpu.power_limit_w;
  j["servers"] = s.inventory.servers;
  j["nics"] = s.inventory.nics;
  j["switch_ports"] = s.inventory.switch_ports;
  j["host_w_per_node"] = s.power.host_w_per_node;
  j["pue"] = s.power.pue;
  j["server"] = s.power.server;
  j["psu_efficiency"] = s.power.psu_efficiency;
  j["gpu_power_model"] = model::power_model_name(s.gpu.power_model);
  j["gpu_power_mean_w"] = m.step_time_s > 0 ? gpu_j / m.step_time_s : 0.0;
  j["gpu_power_peak_w"] = peak_w;
  j["gpu_clock_min"] = min_clock;
  j["throttled_pct"] = r.makespan_s > 0 ? 100.0 * throttled_s / double(r.per_gpu.size()) / r.makespan_s : 0.0;
  j["over_limit_phases"] = over_limit;
  j["node_power_mean_w"] = f.node_w_mean;
  j["node_power_peak_w"] = f.node_w_peak;
  // Feeds are sized on the peak, energy is billed on the mean: their ratio is what a site plans on.
  j["node_power_peak_to_mean"] = f.node_w_mean > 0 ? f.node_w_peak / f.node_w_mean : 0.0;
  j["host_j_per_step"] = f.host_j;
  j["psu_j_per_step"] = f.psu_j;
  j["facility_power_mean_w"] = f.facility_w_mean;
  j["gpu_j_per_step"] = f.gpu_j;
  j["node_j_per_step"] = f.node_j;
  j["facility_j_per_step"] = f.facility_j;
  j["gpu_mj_per_token"] = 1e3 * f.gpu_j / tokens_per_step;
  j["node_mj_per_token"] = 1e3 * f.node_j / tokens_per_step;
  j["facility_mj_per_token"] = 1e3 * f.facility_j / tokens_per_step;
  const model::RunProjection p = s.run.given()
                                     ? model::project_run(s.run, s.gpus, m.step_time_s, tokens_per_step, f.facility_j)
                                     : model::RunProjection{};
  j["run_steps"] = p.steps;
  j["run_days"] = p.days;
  j["run_gpu_hours"] = p.gpu_hours;
  j["run_facility_mwh"] = p.facility_mwh;
  j["run_cost"] = p.cost;
  j["run_co2_t"] = p.co2_t;
  goodput_figures(s, j);
}

const char* const kPowerKeys[] = {"power_limit_w",     "gpu_power_mean_w",   "gpu_power_peak_w",
                                  "gpu_clock_min",     "throttled_pct",      "node_power_mean_w",
                                  "node_power_peak_w", "facility_power_mean_w", "facility_j_per_step",
                                  "gpu_mj_per_token",  "node_mj_per_token",  "facility_mj_per_token",
                                  "run_steps",         "run_days",           "run_gpu_hours",
                                  "run_facility_mwh",  "run_cost",           "run_co2_t",
                                  "goodput",           "interruptions",      "checkpoint_interval_s",
                                  "run_days_with_failures", "run_days_with_failures_p90"};

} // namespace

GoodputInputs goodput_inputs(const Scenario& s, const nlohmann::json& record) {
  GoodputInputs in;
  in.step_s = record.at("step_time_s").get<double>();
  in.facility_j_per_step = record.at("facility_j_per_step").get<double>();
  // While the job waits (down, writing a checkpoint) its GPUs draw their static power, the rest as in a step.
  const model::FabricInventory& inv = s.inventory;
  in.idle_facility_w = ((double(s.gpus) * s.gpu.p_static_w + double(inv.servers) * s.power.host_w_per_node +
                         double(inv.nics) * s.power.nic_w) / s.power.psu_efficiency +
                        double(inv.switch_ports) * s.power.switch_port_w) *
                       s.power.pue;
  const nlohmann::json& b = record.at("breakdown");
  in.exposed_share =
      in.step_s > 0 ? 1.0 - (b.at("compute_s").get<double>() + b.at("optimizer_s").get<double>()) / in.step_s : 0.0;
  return in;
}

nlohmann::json result_to_json(const Scenario& s, const RunResult& r) {
  nlohmann::json j;
  j["name"] = s.name;
  j["file"] = s.file;
  j["gpu"] = s.gpu.name;
  // The software stack whose efficiencies apply (a calibrated profile's, or one carried to this GPU
  // with `gpu: {like: .., stack: ..}`); empty for a data sheet's figures.
  j["gpu_stack"] = s.gpu.stack;
  j["gpus"] = s.gpus;
  j["gpu_peak_flops_per_s"] = s.gpu.peak_flops_per_s;
  // The achieved efficiencies this scenario's micro-batch gets (a curve is read at its GEMM size).
  const double gemm_size = model::gemm_size_flops(s.shape.hidden, s.tokens_per_microbatch / double(s.layout.context)) /
                           double(s.layout.tensor);
  j["gemm_efficiency"] = model::gemm_efficiency_at(s.gpu, gemm_size);
  j["attention_efficiency"] = model::attention_efficiency_at(s.gpu, gemm_size);
  j["microbatches"] = s.microbatches;
  j["steps"] = s.steps;
  j["collective"] = r.collective;
  j["channels"] = s.channels; // NCCL channels per ring (collectives/channels.hpp)
  j["sharding"] = model::sharding_name(s.training.sharding);
  j["shard_group"] = s.training.shard_group; // HSDP's; 0: sharded over every data-parallel rank
  if (s.training.selective_recompute)
    j["recompute_modules"] = model::recompute_module_names(s.training.recompute_modules);
  // Bytes per parameter of each kind of training state (memory_footprint.hpp), by dtype.
  j["state_bytes_per_param"] = {{"weights", s.training.weight_bytes()},
                                {"gradients", s.training.gradient_bytes},
                                {"main_params", s.training.main_params_bytes},
                                {"exp_avg", s.training.exp_avg_bytes},
                                {"exp_avg_sq", s.training.exp_avg_sq_bytes}};
  const model::MemoryFootprint footprint = scenario_footprint(s);
  j["footprint_bytes"] = footprint.total_bytes;
  j["hbm_capacity_bytes"] = footprint.capacity_bytes;
  j["memory"] = {{"weight_bytes", footprint.weight_bytes},         {"gradient_bytes", footprint.gradient_bytes},
                 {"optimizer_bytes", footprint.optimizer_bytes},   {"activation_bytes", footprint.activation_bytes},
                 {"reserved_bytes", footprint.reserved_bytes},     {"total_bytes", footprint.total_bytes},
                 {"capacity_bytes", footprint.capacity_bytes}};
  j["oom"] = !footprint.fits();
  for (const auto& f : kMetricFields)
    j[f.key] = r.metrics.*f.field;
  double sent = 0;
  for (const auto& g : r.per_gpu)
    sent += g.bytes_sent;
  j["bytes_sent_per_gpu"] = r.per_gpu.empty() ? 0.0 : sent / double(r.per_gpu.size()) / double(s.steps);
  j["tokens_per_s_per_gpu"] = r.metrics.tokens_per_gpu / r.metrics.step_time_s;
  // Model FLOPs utilisation as Megatron-LM and PaLM define it: the model's training FLOPs per token
  // (no recompute) at the achieved tokens/s over the GPU's peak; hardware FLOPs utilisation counts
  // what the GPU ran (recomputed forwards included).
  const double model_flops_per_token = model::training_flops_per_token(architecture_of(s), model::Recompute::None);
  j["mfu"] = model_flops_per_token * r.metrics.tokens_per_gpu / r.metrics.step_time_s / s.gpu.peak_flops_per_s;
  j["hfu"] = r.metrics.flops / r.metrics.step_time_s / s.gpu.peak_flops_per_s;
  j["breakdown"] = step_breakdown(s, r);
  if (s.measured_tokens_per_s_per_gpu > 0)
    j["measured_tokens_per_s_per_gpu"] = s.measured_tokens_per_s_per_gpu;
  if (s.measured_node_power_peak_w > 0)
    j["measured_node_power_peak_w"] = s.measured_node_power_peak_w;
  if (s.measured_node_power_mean_w > 0)
    j["measured_node_power_mean_w"] = s.measured_node_power_mean_w;
  if (s.measured_peak_memory_bytes > 0) {
    // What PyTorch's allocator holds: the footprint of the stage the source logs, less the CUDA
    // context and NCCL's buffers (allocated outside it). A reserved peak also holds the allocator's
    // cached, unused blocks, which memwall does not model.
    const model::MemoryFootprint f =
        s.measured_memory_stage >= 0 ? stage_memory(s, s.measured_memory_stage) : footprint;
    j["measured_peak_memory_bytes"] = s.measured_peak_memory_bytes;
    j["measured_memory_kind"] = s.measured_memory_kind;
    j["predicted_peak_memory_bytes"] = f.total_bytes - f.reserved_bytes;
  }
  if (!s.measured_source.empty())
    j["measured_source"] = s.measured_source;
  power_figures(s, r, j);
  if (s.grouped_layout())
    j["parallelism"] = parallel_breakdown(s, r);
  j["makespan_s"] = r.makespan_s;
  j["sim_wall_s"] = r.sim_wall_s;
  j["activities"] = r.activities;
  j["mirrored_planes"] = r.mirrored_planes;
  j["activities_per_s"] = r.sim_wall_s > 0 ? double(r.activities) / r.sim_wall_s : 0.0;
  return j;
}

const std::vector<std::string>& deterministic_record_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k{"gpus", "gpu_peak_flops_per_s", "microbatches", "steps", "footprint_bytes"};
    for (const auto& f : kMetricFields)
      k.emplace_back(f.key);
    k.emplace_back("bytes_sent_per_gpu");
    for (const char* key : {"tokens_per_s_per_gpu", "mfu", "hfu", "gemm_efficiency", "collective", "channels"})
      k.emplace_back(key);
    for (const BreakdownMember& m : kBreakdownMembers)
      k.emplace_back(std::string("breakdown_") + m.key);
    k.emplace_back("breakdown_wait_s");
    k.emplace_back("makespan_s");
    k.emplace_back("activities");
    for (const char* key : kPowerKeys)
      k.emplace_back(key);
    return k;
  }();
  return keys;
}

std::string record_cell(const nlohmann::json& record, const std::string& key) {
  static const std::string prefix = "breakdown_";
  const nlohmann::json& v = key.rfind(prefix, 0) == 0 ? record.at("breakdown").at(key.substr(prefix.size()))
                                                      : record.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

model::StepMetrics metrics_from_json(const nlohmann::json& record) {
  model::StepMetrics m;
  for (const auto& f : kMetricFields)
    m.*f.field = record.at(f.key).get<double>();
  return m;
}

} // namespace memwall::sim
