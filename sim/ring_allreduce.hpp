// Ring all-reduce (reduce-scatter then all-gather) over real SimGrid communications.
//
// A ring of N GPUs moves the gradient in 2(N-1) steps of D/N bytes per GPU. Sending each step as its
// own message is too slow at large N, so each phase is one aggregated message of (N-1) D / N bytes
// from every GPU to its ring successor: all N flows run at once, so their bandwidth share (a slow
// link, a shared link) emerges from SimGrid. The message pays the route latency once; the other
// N-2 steps' latencies are added explicitly, read from the same route.
#pragma once

#include "platform_builder.hpp"
#include "run_recorder.hpp"

#include <simgrid/s4u/Mailbox.hpp>

#include <string>
#include <vector>

namespace memwall::sim {

class RingAllReduce {
public:
  // `platform.gpus` in ring order.
  RingAllReduce(const Platform& platform, RunRecorder& recorder);

  // Called by GPU `rank`'s actor; returns when this GPU holds the fully reduced gradient.
  void run(long long rank, long long step, double gradient_bytes) const;

private:
  std::vector<simgrid::s4u::Mailbox*> mailboxes_;
  std::vector<double> next_route_latency_s_;
  std::vector<double> next_route_j_per_byte_;
  std::vector<std::vector<std::string>> next_route_links_; // names, for link usage in traces
  RunRecorder& recorder_;
};

} // namespace memwall::sim
