// A SimGrid zone that holds a route for each pair of hosts asked for, and nothing for the others.
// SimGrid's full zone keeps a (netpoints)^2 table whatever it holds: 134 MB of pointers at 4,096
// GPUs, zeroed and paged in before the first message and freed after the last, most of a shared
// fabric's set-up (sim/jobs: every pair of four jobs on one fat-tree is carried). Here a route costs
// what it holds. Routes are given as directional links (a split-duplex link's UP or DOWN half) with
// their latency summed, as SimGrid's own routes sum it; a message between hosts without a route is
// refused (a full zone would carry it on an empty route, in no time).
#pragma once

#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <unordered_map>
#include <vector>

namespace memwall::sim {

class PairZone : public simgrid::kernel::routing::NetZoneImpl {
public:
  // A new zone (the platform's root if it is the first); SimGrid's engine owns and destroys it.
  static PairZone* create(const std::string& name);

  // s4u::NetZone::add_route lands here: hosts only (no gateways), one direction per call unless
  // `symmetrical` (then the reverse route runs the links backwards, in the other direction).
  void add_route(simgrid::kernel::routing::NetPoint* src, simgrid::kernel::routing::NetPoint* dst,
                 simgrid::kernel::routing::NetPoint* gw_src, simgrid::kernel::routing::NetPoint* gw_dst,
                 const std::vector<simgrid::s4u::LinkInRoute>& link_list, bool symmetrical) override;

private:
  using NetZoneImpl::NetZoneImpl;
  struct Stored {
    std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;
    double latency_s = 0;
  };
  void store(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
             const std::vector<simgrid::s4u::LinkInRoute>& link_list, bool backwards);
  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;
  std::unordered_map<unsigned long long, Stored> routes_; // by (src id, dst id)
};

} // namespace memwall::sim
