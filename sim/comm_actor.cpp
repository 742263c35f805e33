#include "comm_actor.hpp"

#include <simgrid/s4u/Actor.hpp>

namespace memwall::sim {

void CommActor::operator()() const {
  simgrid::s4u::Actor::self()->daemonize(); // ends with the GPU's compute actor
  for (long long step = 0;; ++step) {
    for (long long bucket = 0;; ++bucket) {
      queue_.queued->acquire();
      const double fraction = queue_.fractions.front();
      queue_.fractions.pop_front();
      if (fraction < 0)
        break;
      allreduce_.run(rank_, step, CollectivePart::AllReduce, fraction, bucket);
    }
    queue_.step_done->release();
  }
}

} // namespace memwall::sim
