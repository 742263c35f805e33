#include "flights.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace memwall::sim::parallel {

namespace sg4 = simgrid::s4u;

namespace {

[[noreturn]] void report_stall(const StageJob& job, long long rank) {
  if (job.faults->stall.empty()) {
    std::string links;
    for (const auto& line : job.faults->applied)
      links += (links.empty() ? "" : "; ") + line;
    job.faults->stall = "a model-parallel transfer stalled at t = " + std::to_string(sg4::Engine::get_clock()) +
                        " s (GPU " + std::to_string(rank) + "): a message lost its path after " + links +
                        ": no other path avoids the links down. Messages resend over another path where the "
                        "fabric has one.";
  }
  // Cancelled, the flows still under way end quietly when their actors' stacks unwind (SimGrid prints
  // a backtrace for a started communication freed unfinished).
  for (sg4::Comm* c : job.in_flight)
    c->cancel();
  sg4::Actor::kill_all();
  sg4::this_actor::exit();
  std::abort(); // not reached: exit() does not return
}

} // namespace

sg4::Host* host_of(const StageJob& job, long long rank) {
  const Platform& p = job.platform;
  if (p.epoch_gpus.size() <= 1)
    return p.gpus[size_t(rank)];
  return p.epoch_gpus[p.epoch_at(sg4::Engine::get_clock())][size_t(rank)];
}

void post(const StageJob& job, Flights& flights, long long src, long long dst, double bytes) {
  flights.comms.push_back(sg4::Comm::sendto_async(host_of(job, src), host_of(job, dst), uint64_t(std::ceil(bytes))));
  flights.ends.emplace_back(src, dst);
  flights.bytes.push_back(bytes);
  if (job.faults) {
    flights.epochs.push_back(job.platform.epoch_at(sg4::Engine::get_clock()));
    job.in_flight.insert(flights.comms.back().get());
  }
}

void note_link_down(const StageJob& job) {
  for (sg4::Comm* c : job.in_flight)
    job.left_at_fault[c] = c->get_remaining();
}

void await(const StageJob& job, Flights& flights, long long rank) {
  if (!job.faults) { // no link events: nothing fails
    sg4::Comm::wait_all(flights.comms);
    return;
  }
  auto forget = [&](size_t i) {
    job.in_flight.erase(flights.comms[i].get());
    job.left_at_fault.erase(flights.comms[i].get());
  };
  std::vector<size_t> pending(flights.comms.size());
  for (size_t i = 0; i < pending.size(); ++i)
    pending[i] = i;
  while (!pending.empty()) {
    std::vector<sg4::CommPtr> waiting;
    for (size_t i : pending)
      waiting.push_back(flights.comms[i]);
    try {
      const auto slot = static_cast<size_t>(sg4::Comm::wait_any(waiting));
      forget(pending[slot]);
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(slot));
      continue;
    } catch (const simgrid::NetworkFailureException&) { // a link on the way went down
    }
    const Platform& p = job.platform;
    const double t_failed = sg4::Engine::get_clock();
    const size_t now = p.epoch_at(t_failed);
    for (size_t slot = pending.size(); slot-- > 0;) {
      const size_t i = pending[slot];
      // As the collectives: a wait of zero time throws for a failed flow, returns 0 for a delivered one
      // and -1 for one under way (Comm::test() would take a failed flow for a delivered one).
      try {
        if (sg4::Comm::wait_any_for({flights.comms[i]}, 0.0) == 0) {
          forget(i);
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(slot));
        }
        continue;
      } catch (const simgrid::NetworkFailureException&) {
      }
      if (flights.epochs[i] == now) { // posted on the routes the failure cut: wait for the next ones
        if (now + 1 >= p.epoch_start_s.size())
          report_stall(job, rank);
        sg4::this_actor::sleep_until(p.epoch_start_s[now + 1]);
      }
      const auto noted = job.left_at_fault.find(flights.comms[i].get());
      const double left = std::min(flights.bytes[i], noted != job.left_at_fault.end() ? noted->second : flights.bytes[i]);
      forget(i);
      const auto [src, dst] = flights.ends[i];
      flights.comms[i] = sg4::Comm::sendto_async(host_of(job, src), host_of(job, dst), uint64_t(std::ceil(left)));
      flights.bytes[i] = left;
      flights.epochs[i] = p.epoch_at(sg4::Engine::get_clock());
      job.in_flight.insert(flights.comms[i].get());
    }
  }
}

} // namespace memwall::sim::parallel
