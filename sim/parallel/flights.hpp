// The flows a model-parallel run's actors post and wait for (TP rings, context rings, expert
// all-to-alls, pipeline sends, the data-parallel rings), and what happens to them when a link goes
// down mid-run, as it happens to the data-parallel collectives (sim/engine/collective_runner.cpp):
// a flow crossing the link fails at that instant; it resends what it had left from the hosts of the
// next route epoch, whose routes avoid the link, once the fabric has re-routed (reroute_delay);
// where no route avoids it, the run stops with a report (exit 1), never with a result.
// Without link events a flight is one SimGrid send per flow and a wait for all, as before.
#pragma once

#include "stage_job.hpp"

#include <simgrid/s4u/Comm.hpp>

#include <utility>
#include <vector>

namespace memwall::sim::parallel {

struct Flights {
  std::vector<simgrid::s4u::CommPtr> comms;
  std::vector<std::pair<long long, long long>> ends; // (sending rank, receiving rank)
  std::vector<double> bytes;
  std::vector<size_t> epochs; // the route epoch each was posted in
  bool empty() const { return comms.empty(); }
};

// The host rank `rank` sends from now: the current route epoch's.
simgrid::s4u::Host* host_of(const StageJob& job, long long rank);

// Starts a flow of `bytes` from rank `src` to rank `dst`.
void post(const StageJob& job, Flights& flights, long long src, long long dst, double bytes);

// Waits until every flow of `flights` has delivered all its bytes, resending around a failed link;
// `rank` names the waiting GPU in a stall's report.
void await(const StageJob& job, Flights& flights, long long rank);

// Before a link goes down (LinkEventActor): what each flow in flight has left.
void note_link_down(const StageJob& job);

} // namespace memwall::sim::parallel
