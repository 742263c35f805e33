// Collective rounds timed without SimGrid messages, where SimGrid could only give every message the
// whole of its path (speed, issue 17).
//
// A round is private when its messages cross only links that never carry two messages at once
// (collectives/link_privacy.hpp: links that only one GPU sends over, or only one receives from, one
// message per round). With no other traffic on the fabric and links that never change, SimGrid's CM02 model
// gives each such message the bandwidth of its slowest link, from the moment both ends have posted
// it (the later of the sender's and the receiver's arrival in the round) to
//   (latency + start) + bytes / bandwidth,
// the arithmetic of SimGrid's lazy update, so the times below are the ones SimGrid's messages would
// have ended at (tests/sim/test_private_rounds.cpp compares whole runs against
// MEMWALL_SIMULATE_MESSAGES=1, which sends every message through SimGrid).
//
// The times form a small data flow: a GPU's arrival in round k + 1 is the end of its last message of
// round k (plus the round's extra latency); a message's start needs both ends' arrivals. A GPU
// entering a run of private rounds records its arrival, and the flow goes as far as the arrivals
// known allow, for every GPU it reaches; the GPU then sleeps once, until it leaves the run, or, when
// it needs a GPU that has not arrived yet, first waits until that GPU's arrival completes its times.
// Instead of four SimGrid calls per message, one or two per GPU and run of rounds.
#pragma once

#include <simgrid/s4u/Semaphore.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <vector>

namespace memwall::sim {

// MEMWALL_SIMULATE_MESSAGES=1: every message a SimGrid communication, no round timed here (the
// reference that private rounds are checked against).
bool simulate_every_message();

class PrivateRounds {
public:
  // `private_rounds`: per round of the schedule, whether it is private (collectives/link_privacy.hpp).
  PrivateRounds(size_t gpus, std::vector<bool> private_rounds);

  // Building, in schedule order: each message of each private round (`bytes` at scale 1, over a path
  // of `latency_s` whose slowest link carries `bandwidth_bytes_per_s`; `j_per_byte` its network
  // energy); then each GPU's rounds (what it receives, as CollectiveRunner sums it, and its extra
  // latency); then finish().
  void add_message(long long src, long long dst, size_t round, double bytes, double latency_s,
                   double bandwidth_bytes_per_s, double j_per_byte);
  void set_round(long long rank, size_t round, double receive_bytes, double extra_latency_s);
  void finish();

  bool is_private(size_t round) const { return private_[round]; }
  size_t private_count() const;

  // Enters GPU `rank` in rounds [first, end) (all private) of collective `ordinal` at `t_s`, now or
  // later (a queued collective starts when its data is ready and the one before it has ended), and
  // follows what that makes known, for every GPU it reaches. `ordinal`: how many collectives this
  // GPU ran before (every GPU runs the same ones in the same order, so it names the collective);
  // `scale` multiplies every message, as CollectiveRunner::run's.
  void enter(long long rank, long long ordinal, size_t first, size_t end, double scale, double t_s);
  // Called inside enter() when a GPU's leaving becomes known; it may enter that GPU again.
  void on_leave(std::function<void(long long rank, double leave_s)> hook) { on_leave_ = std::move(hook); }
  // Released once enter() has followed every consequence: a release is a SimGrid call, during
  // which other actors may run (and enter).
  void wake_later(const simgrid::s4u::SemaphorePtr& wake) { wake_.push_back(wake); }
  // Called by GPU `rank`'s actor at its arrival in round `first`: enter() now; returns when it
  // leaves round `end - 1`.
  void run(long long rank, long long ordinal, size_t first, size_t end, double scale);
  // What rounds [first, end) of `rank` sent, received, spent and stood for, added as
  // CollectiveRunner adds a simulated round's.
  void tally(long long rank, size_t first, size_t end, double scale, double& sent, double& received,
             double& network_j, long long& activities) const;

private:
  struct Kind { // what messages have in common (a round's size, a class of route)
    double bytes, latency_s, bandwidth_bytes_per_s, j_per_byte;
    bool operator<(const Kind& o) const {
      return std::tie(bytes, latency_s, bandwidth_bytes_per_s, j_per_byte) <
             std::tie(o.bytes, o.latency_s, o.bandwidth_bytes_per_s, o.j_per_byte);
    }
  };
  struct Message { // 12 bytes: what settle() reads
    int32_t src, dst;
    uint32_t kind;
  };
  struct Cell { // one GPU in one round: what the data flow reads and writes (40 bytes)
    double arrival_s = 0;
    double last_end_s = 0; // the latest end of its messages known so far
    double extra_latency_s = 0;
    int32_t ordinal = -1; // the collective it last arrived in this round for
    int32_t missing = 0;  // its messages whose other end has not arrived yet
    // Its sends: messages_[send_begin, next slot's send_begin); its receives likewise in receives_.
    uint32_t send_begin = 0, receive_begin = 0;
  };
  struct Gpu {
    int32_t ordinal = -1; // its current collective
    double scale = 1;
    size_t end = 0;     // the end of its current run of rounds
    double leave_s = 0; // its arrival at `end`, once known
    bool left = false;
    bool waiting = false; // its actor waits on `wake`
    simgrid::s4u::SemaphorePtr wake;
  };
  struct Arrival {
    long long rank;
    size_t round;
    double t_s;
  };
  // Cells and messages are laid out round by round, ranks in order within a round: a round's
  // partners (rank xor 2^k, rank +- 1) sit close together.
  size_t slot(long long rank, size_t round) const { return round * gpus_.size() + size_t(rank); }
  Cell& cell(long long rank, size_t round) { return cells_[slot(rank, round)]; }
  // When a message starting at `start_s` ends, as SimGrid computes it.
  double end_time(const Message& m, double scale, double start_s) const;
  // Records the arrivals in next_ and follows their consequences, for every GPU they reach.
  void settle();
  // A message both of whose ends have arrived: its end goes to both GPUs' rounds.
  void join(long long arriving, long long other, size_t round, const Message& m, double start_s,
            std::vector<Arrival>& next);
  // `rank` has all its message ends of `round`: its arrival in the next round follows.
  void close_round(long long rank, size_t round, std::vector<Arrival>& next);

  size_t rounds_;
  std::vector<bool> private_; // per round
  struct Added {              // a message while building
    long long src, dst;
    size_t round;
    double bytes, latency_s, bandwidth_bytes_per_s, j_per_byte;
  };
  std::vector<Added> added_;
  std::vector<Message> messages_; // by (round, src), schedule order within: the sends of each slot
  std::vector<Kind> kinds_;
  std::vector<uint32_t> receives_;    // messages by (round, dst): the receives of each slot
  std::vector<Cell> cells_;           // by slot, and one more (the last slot's ends)
  std::vector<double> receive_bytes_; // by slot
  std::vector<Gpu> gpus_;
  std::vector<Arrival> next_; // settle()'s work list
  bool settling_ = false;
  std::vector<simgrid::s4u::SemaphorePtr> wake_; // to release once settle() is done
  std::function<void(long long, double)> on_leave_;
};

} // namespace memwall::sim
