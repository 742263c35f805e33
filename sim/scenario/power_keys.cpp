#include "sim/scenario/power_keys.hpp"

#include "model/input_node.hpp"
#include "model/server_catalog.hpp"
#include "model/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

namespace memwall::sim {

namespace {

using model::Dimension;
using model::InputNode;

// A count that may carry a decimal suffix: 15T, 2.5B, 300M, 40k (tokens), or a plain number.
double as_large_count(const InputNode& node) {
  if (!node.is_scalar())
    node.fail("expected a number such as 15T, 2.5B or 300000");
  const std::string text = node.as_string();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string suffix(end ? end : "");
  double scale = 0;
  if (suffix.empty())
    scale = 1;
  else if (suffix == "k" || suffix == "K")
    scale = 1e3;
  else if (suffix == "M")
    scale = 1e6;
  else if (suffix == "B" || suffix == "G")
    scale = 1e9;
  else if (suffix == "T")
    scale = 1e12;
  if (end == text.c_str() || scale == 0 || !(value > 0) || !std::isfinite(value * scale))
    node.fail("'" + text + "' is not a positive count (expected e.g. 15T, 2.5B, 300M, 40k or 300000)");
  return value * scale;
}

} // namespace

void parse_power_keys(const InputNode& root, Scenario& s) {
  if (auto c = root.optional_child("power")) {
    c->check_keys({"node", "server", "psu_efficiency", "nic", "switch_port", "pue"});
    if (c->has("node") && c->has("server"))
      c->fail("give the host power per server as node (watts) or as server (a catalog server), not both");
    if (auto v = c->optional_child("node"))
      s.power.host_w_per_node = v->as_non_negative_quantity(Dimension::Power);
    if (auto v = c->optional_child("server")) {
      const model::ServerSpec server = model::parse_server_reference(*v);
      // A fabric node may hold several servers' GPUs (an NVL72 rack: 18 trays of 4): count whole servers.
      const long long gpus_per_node = s.gpus / std::max<long long>(1, s.inventory.servers);
      if (gpus_per_node % server.gpus != 0)
        v->fail("server " + server.name + " holds " + std::to_string(server.gpus) + " GPUs, the fabric's nodes " +
                std::to_string(gpus_per_node) + ": a node must be a whole number of servers");
      s.power.host_w_per_node = server.host_w() * double(gpus_per_node / server.gpus);
      s.power.psu_efficiency = server.psu_efficiency;
      s.power.server = server.name;
    }
    if (auto v = c->optional_child("psu_efficiency"))
      s.power.psu_efficiency = v->as_fraction();
    if (auto v = c->optional_child("nic"))
      s.power.nic_w = v->as_non_negative_quantity(Dimension::Power);
    if (auto v = c->optional_child("switch_port"))
      s.power.switch_port_w = v->as_non_negative_quantity(Dimension::Power);
    if (auto v = c->optional_child("pue")) {
      s.power.pue = v->as_number();
      // PUE is facility over IT power: below 1 the IT equipment would draw more than the facility.
      if (s.power.pue < 1.0)
        v->fail("pue must be at least 1 (facility power over IT power), got " + v->as_string());
    }
  }
  if (auto c = root.optional_child("run")) {
    c->check_keys({"tokens", "steps", "duration"});
    if (int(c->has("tokens")) + int(c->has("steps")) + int(c->has("duration")) != 1)
      c->fail("give the run's length as tokens, steps or a duration (one of the three)");
    if (auto v = c->optional_child("duration"))
      s.run.duration_s = v->as_positive_quantity(Dimension::Time);
    if (auto v = c->optional_child("tokens"))
      s.run.tokens = as_large_count(*v);
    if (auto v = c->optional_child("steps"))
      s.run.steps = as_large_count(*v);
  }
  if (auto c = root.optional_child("cost")) {
    c->check_keys({"gpu_hour", "kwh", "grid_carbon"});
    if (!root.has("run"))
      c->fail("cost: needs run: (tokens or steps) to price");
    if (auto v = c->optional_child("gpu_hour"))
      s.run.gpu_hour_price = v->as_non_negative_number();
    if (auto v = c->optional_child("kwh"))
      s.run.kwh_price = v->as_non_negative_number();
    if (auto v = c->optional_child("grid_carbon")) // g CO2e per kWh
      s.run.grid_g_per_kwh = v->as_non_negative_number();
  }
}

model::FabricInventory fabric_inventory(const topologies::FabricGraph& graph, long long gpus) {
  using topologies::NodeKind;
  model::FabricInventory inv;
  inv.servers = std::max<long long>(1, gpus / std::max<long long>(1, topologies::gpus_per_node(graph)));
  long long nic_vertices = 0, gpus_on_switches = 0;
  for (auto [v, end] = boost::vertices(graph); v != end; ++v) {
    nic_vertices += graph[*v].kind == NodeKind::Nic;
    inv.switches += graph[*v].kind == NodeKind::Switch;
  }
  std::unordered_map<size_t, std::unordered_set<size_t>> switch_neighbours;
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    if (graph[*e].link_class == "nvlink")
      continue;
    const auto u = boost::source(*e, graph), w = boost::target(*e, graph);
    const NodeKind a = graph[u].kind, b = graph[w].kind;
    inv.switch_ports += (a == NodeKind::Switch) + (b == NodeKind::Switch);
    gpus_on_switches +=
        (a == NodeKind::Gpu && b == NodeKind::Switch) || (b == NodeKind::Gpu && a == NodeKind::Switch);
    if (a == NodeKind::Switch && b == NodeKind::Switch) {
      ++inv.fabric_links;
      switch_neighbours[u].insert(w);
      switch_neighbours[w].insert(u);
    } else if (a == NodeKind::Gpu || a == NodeKind::Nic || b == NodeKind::Gpu || b == NodeKind::Nic) {
      ++inv.access_links;
    }
  }
  for (const auto& [sw, others] : switch_neighbours)
    inv.min_switch_neighbours = inv.min_switch_neighbours == 0
                                    ? (long long)others.size()
                                    : std::min(inv.min_switch_neighbours, (long long)others.size());
  inv.nics = nic_vertices > 0 ? nic_vertices : gpus_on_switches;
  return inv;
}

} // namespace memwall::sim
