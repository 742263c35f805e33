// The communication stream of one GPU when gradients are all-reduced in buckets during the backward
// pass (PyTorch DDP semantics): the GPU's compute actor queues each bucket as soon as it is ready;
// this actor all-reduces them one after the other, like a NCCL stream, while compute goes on.
#pragma once

#include "collective_runner.hpp"

#include <simgrid/s4u/Semaphore.hpp>

#include <deque>

namespace memwall::sim {

struct BucketQueue {
  std::deque<double> fractions; // of the whole gradient; a negative entry ends the step
  simgrid::s4u::SemaphorePtr queued = simgrid::s4u::Semaphore::create(0);
  simgrid::s4u::SemaphorePtr step_done = simgrid::s4u::Semaphore::create(0);

  void push(double fraction) {
    fractions.push_back(fraction);
    queued->release();
  }
};

class CommActor {
public:
  CommActor(long long rank, const CollectiveRunner& allreduce, BucketQueue& queue)
      : rank_(rank), allreduce_(allreduce), queue_(queue) {}
  void operator()() const;

private:
  long long rank_;
  const CollectiveRunner& allreduce_;
  BucketQueue& queue_;
};

} // namespace memwall::sim
