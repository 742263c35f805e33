#include "sim/engine/comm_actor.hpp"

#include <simgrid/s4u/Actor.hpp>

namespace memwall::sim {

void CommActor::operator()() const {
  simgrid::s4u::Actor::self()->daemonize(); // ends with the GPU's compute actor
  while (true) {
    if (queue_.requests.empty()) {
      queue_.idle = true;
      queue_.wake->acquire();
    }
    const CommRequest r = queue_.requests.front();
    queue_.requests.pop_front();
    collectives_.run(rank_, r.step, r.part, r.fraction, r.sequence, true);
    if (r.done)
      r.done->release();
  }
}

} // namespace memwall::sim
