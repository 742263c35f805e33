// Timed link events (a bandwidth change, a link going down) applied during the run by a daemon
// actor, and what happens to the collectives: a link that is down from t = 0 is routed around (where
// the fabric has another path); a link that goes down later fails the messages crossing it, which
// resend their remaining bytes over routes that avoid it once the fabric has re-routed (one route
// epoch per such event, from the event plus the fabric's reroute_delay). Where no
// other path exists, the messages that need the link stall and the run stops with a report.
#pragma once

#include "sim/scenario/scenario.hpp"
#include "topologies/fabric_graph.hpp"

#include <functional>
#include <string>
#include <vector>

namespace memwall::sim {

struct FaultLog {
  std::vector<std::string> applied; // "t = 0.4 s: leaf0-spine1 down"
  std::string stall;                // set when a message lost its path
};

// The fabric without the links that are down from the start; InputError if that disconnects it.
topologies::FabricGraph without_links_down_at_start(const Scenario& scenario, topologies::FabricGraph graph);

// The fabric after each mid-run link failure, for the platform's route epochs: one graph per down
// event (all links down by then removed), in force from the event plus the fabric's reroute_delay,
// as long as every GPU can still reach every other.
struct LaterFabrics {
  std::vector<topologies::FabricGraph> graphs;
  std::vector<double> start_s;
};
LaterFabrics fabrics_after_failures(const Scenario& scenario, const topologies::FabricGraph& start);

class LinkEventActor {
public:
  // `before_down`: called just before a link goes down (the collectives note what is in flight).
  LinkEventActor(const Scenario& scenario, FaultLog& log, std::function<void()> before_down)
      : scenario_(scenario), log_(log), before_down_(std::move(before_down)) {}
  void operator()() const;

private:
  const Scenario& scenario_;
  FaultLog& log_;
  std::function<void()> before_down_;
};

} // namespace memwall::sim
