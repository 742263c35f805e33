// Executes an all-reduce schedule with SimGrid communications: per round, every GPU posts its sends
// and receives at once and waits for all of them, then pays the round's aggregated extra latency
// (extra_latency_steps x its longest send route). Bandwidth sharing on links comes from SimGrid.
// When a link goes down mid-run, the messages crossing it fail; both ends move to the platform's
// next route epoch and the sender resends the remaining bytes over a route that avoids the link.
// Private rounds (messages that can never share a link) are timed without SimGrid messages
// (private_rounds.hpp), with the same results; where every round is, a GPU's communication stream
// is timed as well, without an actor (queue / wait_queued).
#pragma once

#include "collectives/schedule.hpp"
#include "sim/engine/link_events.hpp"
#include "sim/engine/platform_builder.hpp"
#include "sim/engine/private_rounds.hpp"
#include "sim/engine/run_recorder.hpp"

#include <simgrid/s4u/Mailbox.hpp>

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace memwall::sim {

// Which part of an all-reduce schedule to run: all of it, or its first half (the reduce-scatter
// rounds) or second half (the all-gather rounds), as ZeRO-2/3 need.
enum class CollectivePart { AllReduce, ReduceScatter, AllGather };
trace::TracePhase trace_kind(CollectivePart part);

// A protocol's latency per algorithm step by the kind of hop (collectives/protocol.hpp). A step
// costs the larger of it and its route's link latency: NCCL's figures include the hop's flight, and a
// fabric whose links are slower than that bounds the step instead. Zero: the links' latency alone.
struct StepLatency {
  double nvlink_s = 0; // a hop that stays inside an NVLink domain
  double net_s = 0;    // a hop that crosses any other link (a NIC, a switch)
  bool any() const { return nvlink_s > 0 || net_s > 0; }
};

class CollectiveRunner {
public:
  // `message_latency_s`: software latency of every message of every algorithm step.
  // `faults`: where a message that loses its path (a link went down) reports the stall.
  // `private_rounds`: per round, whether it is timed without SimGrid messages (private_rounds.hpp;
  // only where the links never change and nothing else crosses the fabric); empty: none is.
  CollectiveRunner(const collectives::Schedule& schedule, const Platform& platform, RunRecorder& recorder,
                   double message_latency_s = 0, FaultLog* faults = nullptr,
                   std::vector<bool> private_rounds = {}, StepLatency step_latency = {});

  // Called by GPU `rank`'s actor; returns when this GPU's part of the collective is done. `scale`
  // multiplies every flow (a gradient bucket is a fraction of the whole); collectives within a step
  // take distinct `sequence` numbers, so that their messages never mix.
  // `overlapped`: called from the communication stream, beside the compute.
  void run(long long rank, long long step, CollectivePart part = CollectivePart::AllReduce,
           double scale = 1.0, long long sequence = 0, bool overlapped = false) const;
  const std::string& algorithm() const { return algorithm_; }
  // Communication streams timed without actors, where every round is private: GPU `rank` queues a
  // collective whose data is ready at `ready_s` (now or later: its compute actor need not sleep to
  // that time first); it starts when ready and when the one queued before it has ended, as on a
  // stream actor. Returns its number in the stream, for wait_queued(); `awaited`: someone will wait.
  bool streams_timed() const { return !streams_.empty(); }
  long long queue(long long rank, long long step, CollectivePart part, double scale, long long sequence,
                  double ready_s, bool awaited) const;
  // Returns (to GPU `rank`'s compute actor) once collective `ticket` of its stream has ended.
  void wait_queued(long long rank, long long ticket) const;
  // Whether collective `ticket` of GPU `rank`'s stream has ended already (known before the clock
  // reaches it): then `end_s` is its end and nobody waits for it any more.
  bool queued_ended(long long rank, long long ticket, double& end_s) const;
  // How many of the schedule's rounds are timed without SimGrid messages.
  size_t private_rounds() const { return private_ ? private_->private_count() : 0; }
  // Called just before a link goes down: notes the bytes each message in flight has left, which
  // a message that then fails resends over its new route.
  void note_link_down() const;
  // Several jobs on one platform (sim/jobs): each job's runner names its messages' mailboxes apart.
  void set_job(long long job) { job_ = job; }

private:
  [[noreturn]] void report_stall(long long rank, long long step, size_t round) const;
  // Moves the calling actor to GPU `rank`'s host of the epoch in force now; returns that epoch.
  size_t enter_current_epoch(long long rank) const;
  void forget(const simgrid::s4u::CommPtr& send) const;
  struct PostedRound;
  // Waits for a round's sends and receives; resends and receives again what a link failure broke.
  // Round `k` of GPU `rank` through SimGrid messages (every message one SimGrid communication).
  void simulate_round(long long rank, long long step, size_t k, double scale, long long sequence,
                      trace::TracePhase kind, long long ordinal, double& sent,
                      double& network_j, long long& activities) const;
  void wait_round(PostedRound& posted, long long rank, long long step, size_t round, size_t epoch,
                  long long sequence, long long& activities) const;
  struct Send {
    long long dst;
    double bytes;
    double latency_s;
    double j_per_byte;
    double bandwidth_bytes_per_s; // of its slowest link
    bool crosses_net = false;     // a link other than NVLink on its route (when a protocol is timed)
    std::vector<std::string> links; // names, when tracing
  };
  struct RankRound {
    std::vector<Send> sends;
    int receives = 0;
    double receive_bytes = 0;
    double extra_latency_s = 0;
  };
  std::string algorithm_;
  std::vector<std::vector<std::vector<RankRound>>> rounds_; // [epoch][rank][round]
  std::unique_ptr<PrivateRounds> private_;                 // null when every round is simulated
  struct Queued { // a collective on a timed stream
    long long step, sequence;
    CollectivePart part;
    double scale, ready_s, start_s = 0, end_s = 0;
    bool awaited, done = false;
  };
  struct TimedStream {
    std::deque<Queued> items; // from number `base` on; the done ones nobody waits for are dropped
    long long base = 0;
    long long running = 0; // the number of the one in flight, or of the next to run
    bool busy = false;
    double free_s = 0; // when the last one ended
    long long waited = -1; // the number the compute actor waits for (on `wake`)
    simgrid::s4u::SemaphorePtr wake;
  };
  mutable std::vector<TimedStream> streams_; // per GPU, when streams are timed
  // The rounds [first, last) of the schedule that `part` runs.
  std::pair<size_t, size_t> rounds_of(CollectivePart part) const;
  // Drops the stream's done collectives at its front that nobody waits for.
  static void drop_finished(TimedStream& stream);
  void start_queued(long long rank) const;
  void queued_left(long long rank, double leave_s) const;
  mutable std::vector<long long> collectives_run_;         // per GPU: its collectives so far
  // Per collective (by ordinal, the same on every GPU): when its last member arrived. A GPU's time
  // in it before then is waiting for the others (stragglers), not communication.
  mutable std::vector<double> last_arrival_s_;
  const Platform& platform_;
  long long job_ = 0;
  RunRecorder& recorder_;
  FaultLog* faults_;
  // Sends in flight, and what each had left when a link last went down (SimGrid reports 0 after).
  mutable std::unordered_set<simgrid::s4u::Comm*> in_flight_;
  mutable std::unordered_map<const simgrid::s4u::Comm*, double> left_at_fault_;
};

} // namespace memwall::sim
