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
  // The stream blocks on `wake` only when it has nothing queued, and a push releases it only then:
  // a semaphore operation is a SimGrid call (a round trip through the scheduler), and a busy stream
  // (the usual case: buckets come faster than the network drains them) needs none.
  simgrid::s4u::SemaphorePtr wake = simgrid::s4u::Semaphore::create(0);
  bool idle = false;

  // Queues a collective; returns the semaphore its completion releases, or null when nobody will
  // wait for this one (`awaited` false: a bucket before the last).
  simgrid::s4u::SemaphorePtr push(CollectivePart part, double fraction, long long step, long long sequence,
                                  bool awaited = true) {
    CommRequest r{part, fraction, step, sequence, awaited ? simgrid::s4u::Semaphore::create(0) : nullptr};
    requests.push_back(r);
    if (idle) {
      idle = false;
      wake->release();
    }
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
