// The communication stream of one GPU when communication overlaps compute: the GPU's compute actor
// queues collectives (gradient buckets in the DDP style; per-layer parameter all-gathers and gradient
// reduce-scatters in the FSDP style) and this actor runs them one after the other, like a NCCL
// stream, while compute goes on. Every GPU queues the same collectives in the same order, so they
// match up across GPUs; the compute actor waits only for the ones it needs.
#pragma once

#include "sim/engine/collective_runner.hpp"

#include <simgrid/s4u/Semaphore.hpp>

#include <deque>

namespace memwall::sim {

struct CommRequest {
  CollectivePart part = CollectivePart::AllReduce;
  double fraction = 1;  // of the whole gradient / parameter set
  long long step = 0;
  long long sequence = 0; // distinct within a step
  simgrid::s4u::SemaphorePtr done; // released when the collective completes; may be null
};

struct CommQueue {
  std::deque<CommRequest> requests;
  simgrid::s4u::SemaphorePtr queued = simgrid::s4u::Semaphore::create(0);

  // Queues a collective; returns the semaphore its completion releases.
  simgrid::s4u::SemaphorePtr push(CollectivePart part, double fraction, long long step, long long sequence) {
    CommRequest r{part, fraction, step, sequence, simgrid::s4u::Semaphore::create(0)};
    requests.push_back(r);
    queued->release();
    return r.done;
  }
};

class CommActor {
public:
  CommActor(long long rank, const CollectiveRunner& collectives, CommQueue& queue)
      : rank_(rank), collectives_(collectives), queue_(queue) {}
  void operator()() const;

private:
  long long rank_;
  const CollectiveRunner& collectives_;
  CommQueue& queue_;
};

} // namespace memwall::sim
