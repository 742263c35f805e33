#include "trace_rows.hpp"

#include <algorithm>
#include <tuple>
#include <stdexcept>
#include <utility>

namespace memwall::trace {

const char* trace_phase_name(TracePhase phase) {
  static const char* const names[kTracePhases] = {"fwd_gemm",  "fwd_elementwise", "bwd_gemm", "bwd_elementwise",
                                                  "allreduce", "optimizer",       "forward",  "backward",
                                                  "compute",   "wait",            "allgather", "reducescatter",
                                                  "tp_comm",   "pp_wait",         "pp_send",   "ep_comm",
                                                  "cp_comm"};
  return names[static_cast<int>(phase)];
}

TraceLevel parse_trace_level(const std::string& text) {
  if (text == "step")
    return TraceLevel::Step;
  if (text == "microbatch")
    return TraceLevel::Microbatch;
  if (text == "layer")
    return TraceLevel::Layer;
  if (text == "message")
    return TraceLevel::Message;
  throw std::invalid_argument("unknown trace level '" + text + "' (step, microbatch, layer, message)");
}

const char* trace_level_name(TraceLevel level) {
  switch (level) {
  case TraceLevel::Step:
    return "step";
  case TraceLevel::Microbatch:
    return "microbatch";
  case TraceLevel::Layer:
    return "layer";
  case TraceLevel::Message:
    return "message";
  }
  return "?";
}

std::vector<PowerRow> power_rows(const std::vector<PhaseRow>& phases) {
  std::vector<PowerRow> rows;
  for (const auto& p : phases) {
    const double span_s = p.t_end_s - p.t_start_s;
    if (p.stream != TraceStream::Compute || span_s <= 0)
      continue;
    rows.push_back({p.gpu, p.t_start_s, p.t_end_s, (p.e_arith_j + p.e_hbm_j + p.e_static_j) / span_s, p.clock, p.job});
  }
  // A GPU's compute-stream rows tile its time, but a row dated by arithmetic (merged phases end at
  // start + work / speed) and the next dated by SimGrid's clock after sleeping to that end may overlap
  // by the clock's last bit: such a row starts where the one before ends (its watts unchanged), so that
  // no instant counts a GPU twice in the server series.
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(rows[a].job, rows[a].gpu, rows[a].t_start_s) < std::tie(rows[b].job, rows[b].gpu, rows[b].t_start_s);
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const PowerRow& before = rows[order[k - 1]];
    PowerRow& r = rows[order[k]];
    if (r.job == before.job && r.gpu == before.gpu && r.t_start_s < before.t_end_s &&
        before.t_end_s - r.t_start_s <= 1e-12 * std::max(1.0, before.t_end_s))
      r.t_start_s = std::min(before.t_end_s, r.t_end_s);
  }
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const PowerRow& r) { return r.t_end_s <= r.t_start_s; }),
             rows.end());
  return rows;
}

std::vector<ServerPowerRow> server_power_rows(const std::vector<PowerRow>& power, long long gpus_per_server,
                                              long long servers, double base_w, double psu_efficiency,
                                              bool whole_job) {
  const long long groups = whole_job ? 1 : std::max<long long>(1, servers);
  const double group_base_w = whole_job ? base_w * double(servers) : base_w;
  // Each GPU row adds its watts at its start and takes them back at its end.
  std::vector<std::vector<std::pair<double, double>>> events(static_cast<size_t>(groups));
  for (const auto& r : power) {
    const long long g = whole_job ? 0 : std::min(groups - 1, (long long)r.gpu / std::max(1LL, gpus_per_server));
    events[size_t(g)].emplace_back(r.t_start_s, r.power_w);
    events[size_t(g)].emplace_back(r.t_end_s, -r.power_w);
  }
  std::vector<ServerPowerRow> rows;
  for (long long g = 0; g < groups; ++g) {
    auto& e = events[size_t(g)];
    std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double level_w = 0;
    for (size_t i = 0; i < e.size();) {
      const double t = e[i].first;
      for (; i < e.size() && e[i].first == t; ++i) // every change at this instant, then one level
        level_w += e[i].second;
      if (i < e.size() && e[i].first > t)
        rows.push_back({int32_t(whole_job ? -1 : g), t, e[i].first, (group_base_w + level_w) / psu_efficiency});
    }
  }
  return rows;
}

} // namespace memwall::trace
