// Timed link events (a bandwidth change, a link going down) applied during the run by a daemon
// actor, and what happens to the collectives: static routes are computed once, so a link that is
// down from t = 0 is routed around (where the fabric has another path), while a link that goes down
// later stalls the messages that need it; the run then stops with a report of the stall.
#pragma once

#include "scenario.hpp"
#include "topologies/fabric_graph.hpp"

#include <string>
#include <vector>

namespace memwall::sim {

struct FaultLog {
  std::vector<std::string> applied; // "t = 0.4 s: leaf0-spine1 down"
  std::string stall;                // set when a message lost its path
};

// The fabric without the links that are down from the start; InputError if that disconnects it.
topologies::FabricGraph without_links_down_at_start(const Scenario& scenario, topologies::FabricGraph graph);

class LinkEventActor {
public:
  LinkEventActor(const Scenario& scenario, FaultLog& log) : scenario_(scenario), log_(log) {}
  void operator()() const;

private:
  const Scenario& scenario_;
  FaultLog& log_;
};

} // namespace memwall::sim
