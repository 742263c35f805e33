#include "sim/engine/link_events.hpp"

#include "model/input_error.hpp"
#include "topologies/fabric_routes.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Link.hpp>

#include <cstdio>
#include <stdexcept>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

namespace {

void remove_link(topologies::FabricGraph& graph, const std::string& name) {
  for (auto [edge, end] = boost::edges(graph); edge != end; ++edge)
    if (graph[*edge].name == name) {
      boost::remove_edge(*edge, graph);
      topologies::number_edges(graph); // the copies' numbers have a gap now: per-edge tables need 0..E-1
      return;
    }
}

} // namespace

LaterFabrics fabrics_after_failures(const Scenario& s, const topologies::FabricGraph& start) {
  LaterFabrics later;
  topologies::FabricGraph graph = start;
  for (const auto& e : s.link_events) {
    if (!e.down || e.at_s <= 0)
      continue;
    remove_link(graph, e.link);
    try {
      topologies::validate_fabric_graph(graph);
    } catch (const std::invalid_argument&) {
      break; // no path around it: the messages that need it will stall
    }
    const double routed_s = e.at_s + s.fabric.reroute_delay_s; // the new routes take effect then
    if (!later.start_s.empty() && later.start_s.back() == routed_s)
      later.graphs.back() = graph; // two links down at the same time: one epoch
    else {
      later.graphs.push_back(graph);
      later.start_s.push_back(routed_s);
    }
  }
  return later;
}

topologies::FabricGraph without_links_down_at_start(const Scenario& s, topologies::FabricGraph graph) {
  for (const auto& e : s.link_events)
    if (e.down && e.at_s <= 0)
      remove_link(graph, e.link);
  try {
    topologies::validate_fabric_graph(graph);
  } catch (const std::invalid_argument& e) {
    throw model::InputError(s.file, s.line, "cluster.link_events",
                            std::string("with the links that are down from the start: ") + e.what());
  }
  return graph;
}

void LinkEventActor::operator()() const {
  sg4::Actor::self()->daemonize(); // ends with the GPUs
  for (const auto& e : scenario_.link_events) {
    if (e.down && e.at_s <= 0)
      continue; // routed around before the run
    sg4::this_actor::sleep_until(e.at_s);
    char line[256]; // logged first: turning a link off fails the messages on it at once
    if (e.down)
      std::snprintf(line, sizeof line, "t = %g s: %s down", e.at_s, e.link.c_str());
    else
      std::snprintf(line, sizeof line, "t = %g s: %s at %g GB/s", e.at_s, e.link.c_str(),
                    e.bytes_per_s / 1e9);
    log_.applied.emplace_back(line);
    if (e.down && before_down_)
      before_down_();
    for (const char* dir : {"_UP", "_DOWN"}) {
      sg4::Link* link = sg4::Link::by_name_or_null(e.link + dir);
      if (!link)
        continue;
      if (e.down)
        link->turn_off();
      else
        link->set_bandwidth(e.bytes_per_s * scenario_.fabric.efficiency);
    }
  }
}

} // namespace memwall::sim
