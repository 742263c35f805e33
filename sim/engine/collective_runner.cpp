#include "sim/engine/collective_runner.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

CollectiveRunner::CollectiveRunner(const collectives::Schedule& schedule, const Platform& platform,
                                   RunRecorder& recorder, double message_latency_s, FaultLog* faults,
                                   std::vector<bool> private_rounds, StepLatency step_latency)
    : algorithm_(schedule.algorithm), platform_(platform), recorder_(recorder), faults_(faults) {
  const size_t n = platform.gpus.size();
  const size_t rounds = schedule.rounds.size();
  const size_t epochs = platform.epoch_gpus.size();
  collectives_run_.assign(n, 0);
  if (epochs == 1 && std::find(private_rounds.begin(), private_rounds.end(), true) != private_rounds.end())
    private_ = std::make_unique<PrivateRounds>(n, std::move(private_rounds));
  rounds_.assign(epochs, std::vector<std::vector<RankRound>>(n, std::vector<RankRound>(rounds)));
  for (size_t e = 0; e < epochs; ++e) {
    const std::vector<sg4::Host*>& hosts = platform.epoch_gpus[e];
    // Per pair: its route's summary, and its links (the first epoch's routes are data in the platform).
    std::unordered_map<std::pair<long long, long long>, Send, RankPairHash> route_cache;
    std::unordered_map<const sg4::Link*, double> link_pj; // per bit
    struct StepMix { // per sending GPU, over one round's sends (protocol step latency)
      double max_step_s = 0, max_route_s = 0;
    };
    std::vector<StepMix> step_mix;
    for (size_t k = 0; k < rounds; ++k) {
      const collectives::Round& round = schedule.rounds[k];
      double round_bytes = 0, round_bytes_x_step_s = 0;
      if (step_latency.any())
        step_mix.assign(n, StepMix{});
      for (const collectives::Flow& f : round.flows) {
        auto [it, fresh] = route_cache.try_emplace({f.src, f.dst});
        Send& route = it->second;
        if (fresh) {
          std::vector<sg4::Link*> found;
          const std::vector<sg4::Link*>* links = &found;
          route.latency_s = 0;
          if (auto known = e == 0 ? platform.routes.find({f.src, f.dst}) : platform.routes.end();
              known != platform.routes.end()) {
            links = &known->second.links;
            route.latency_s = known->second.latency_s;
          } else {
            hosts[size_t(f.src)]->route_to(hosts[size_t(f.dst)], found, &route.latency_s);
          }
          double pj_per_bit = 0;
          route.crosses_net = false;
          route.bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
          for (const sg4::Link* link : *links) {
            auto [pj, fresh_link] = link_pj.try_emplace(link, 0.0);
            if (fresh_link)
              if (auto p = platform.links->pj_per_bit.find(link->get_name()); p != platform.links->pj_per_bit.end())
                pj->second = p->second;
            const double link_pj = pj->second;
            pj_per_bit += link_pj;
            route.bandwidth_bytes_per_s = std::min(route.bandwidth_bytes_per_s, link->get_bandwidth());
            if (step_latency.any() && !route.crosses_net) {
              const auto kind = platform.links->link_class.find(link->get_name());
              route.crosses_net = kind == platform.links->link_class.end() || kind->second != "nvlink";
            }
            if (!recorder.tracing())
              continue; // link names serve the trace only
            route.links.push_back(link->get_name());
            recorder.register_link(
                link->get_name(),
                platform.links->link_class.count(link->get_name()) ? platform.links->link_class.at(link->get_name()) : "",
                link->get_bandwidth(), 8.0 * link_pj * 1e-12);
          }
          route.j_per_byte = 8.0 * pj_per_bit * 1e-12;
        }
        Send send = route;
        send.dst = f.dst;
        send.bytes = f.bytes;
        RankRound& mine = rounds_[e][size_t(f.src)][k];
        const bool timed = private_ && private_->is_private(k);
        if (!timed) // a private round's messages live in private_
          mine.sends.push_back(send);
        // The aggregated message pays its route latency once; the round's other steps pay it again,
        // and every step pays the software message latency.
        if (step_latency.any()) { // settled once the round's sends are known (below)
          const double step_s =
              std::max(send.latency_s, send.crosses_net ? step_latency.net_s : step_latency.nvlink_s);
          StepMix& mix = step_mix[size_t(f.src)];
          round_bytes += f.bytes;
          round_bytes_x_step_s += f.bytes * step_s;
          mix.max_step_s = std::max(mix.max_step_s, step_s);
          mix.max_route_s = std::max(mix.max_route_s, send.latency_s);
        } else {
          mine.extra_latency_s =
              std::max(mine.extra_latency_s, round.extra_latency_steps * send.latency_s +
                                                 (1.0 + round.extra_latency_steps) * message_latency_s);
        }
        rounds_[e][size_t(f.dst)][k].receives += 1;
        rounds_[e][size_t(f.dst)][k].receive_bytes += f.bytes;
        if (timed)
          private_->add_message(f.src, f.dst, k, f.bytes, send.latency_s, send.bandwidth_bytes_per_s,
                                send.j_per_byte);
      }
      // A protocol's step latency, as NCCL's tuner counts it: a pipelined ring pays the network step
      // on the hops that leave a server and the NVLink step on the others, so a step costs their
      // mean over the ring, whichever GPU's step it is (data moves on while a slow hop is in
      // flight): here the byte-weighted mean over the round's hops (with channels every GPU's own
      // mean is that too). The aggregated messages already paid their longest route latency once.
      for (size_t src = 0; src < step_mix.size(); ++src) {
        const StepMix& mix = step_mix[src];
        if (mix.max_step_s <= 0)
          continue;
        const double step_s = round_bytes > 0 ? round_bytes_x_step_s / round_bytes : mix.max_step_s;
        RankRound& mine = rounds_[e][src][k];
        mine.extra_latency_s = std::max(mine.extra_latency_s,
                                        std::max(0.0, (1.0 + round.extra_latency_steps) * step_s - mix.max_route_s) +
                                            (1.0 + round.extra_latency_steps) * message_latency_s);
      }
    }
  }
  if (!private_)
    return;
  for (size_t rank = 0; rank < n; ++rank)
    for (size_t k = 0; k < rounds; ++k)
      private_->set_round(static_cast<long long>(rank), k, rounds_[0][rank][k].receive_bytes,
                          rounds_[0][rank][k].extra_latency_s);
  private_->finish();
  if (private_->private_count() == rounds) { // every collective timed: streams need no actor
    streams_.resize(n);
    private_->on_leave([this](long long rank, double leave_s) { queued_left(rank, leave_s); });
  }
}

namespace {

int payload = 0; // what every message carries: the data itself is not simulated, only its size

sg4::Mailbox* inbox(long long job, long long rank, size_t round, long long step, long long sequence) {
  // Step parity keeps a fast GPU's next-step messages apart from a slow one's current ones. The name
  // is written in place (two per GPU and round, millions at 16k GPUs), on this actor's own stack: the
  // lookup is a SimGrid call that other actors may run before, so no buffer may be shared.
  char name[5 * 24];
  char* end = name;
  *end++ = 'a';
  *end++ = 'r';
  for (const long long part : {job, rank, static_cast<long long>(round), step % 2, sequence}) {
    *end++ = '-';
    end = std::to_chars(end, name + sizeof name, part).ptr;
  }
  return sg4::Mailbox::by_name(std::string(name, end));
}

} // namespace

void CollectiveRunner::report_stall(long long rank, long long step, size_t round) const {
  if (faults_ && faults_->stall.empty()) {
    std::string links;
    for (const auto& line : faults_->applied)
      links += (links.empty() ? "" : "; ") + line;
    faults_->stall =
        "the all-reduce stalled at t = " + std::to_string(sg4::Engine::get_clock()) + " s (step " +
        std::to_string(step) + ", round " + std::to_string(round) + ", GPU " + std::to_string(rank) +
        "): a message lost its path after " + links +
        ": no other path avoids the links down. Messages resend over another path where the fabric has one.";
  }
  sg4::Actor::kill_all();
  sg4::this_actor::exit();
}

void CollectiveRunner::note_link_down() const {
  for (sg4::Comm* c : in_flight_)
    left_at_fault_[c] = c->get_remaining();
}

void CollectiveRunner::forget(const sg4::CommPtr& send) const {
  in_flight_.erase(send.get());
  left_at_fault_.erase(send.get());
}

size_t CollectiveRunner::enter_current_epoch(long long rank) const {
  const size_t e = platform_.epoch_at(sg4::Engine::get_clock());
  sg4::Host* host = platform_.epoch_gpus[e][size_t(rank)];
  if (sg4::this_actor::get_host() != host)
    sg4::this_actor::set_host(host); // same speed: only the routes change
  return e;
}

// What a round of one GPU has posted: its sends (each as the parts it went in: one, or more when a
// link failure made it resend its rest over another route) and its receives.
struct CollectiveRunner::PostedRound {
  struct Part {
    double bytes, t_start_s, t_end_s;
    size_t epoch; // whose route carried it
  };
  std::vector<sg4::CommPtr> comms;      // the sends, then the receives
  std::vector<std::vector<Part>> parts; // per send; the last is open until the send completes
  std::vector<int*> slots;              // receive buffers
  size_t sends = 0;
};

void CollectiveRunner::wait_round(PostedRound& posted, long long rank, long long step, size_t k, size_t epoch,
                                  long long sequence, long long& activities) const {
  const RankRound& round = rounds_[epoch][size_t(rank)][k];
  std::vector<size_t> pending(posted.comms.size());
  for (size_t i = 0; i < pending.size(); ++i)
    pending[i] = i;
  auto finish = [&](size_t slot) { // when it completed (maybe while this actor slept)
    if (const size_t i = pending[slot]; i < posted.sends) {
      posted.parts[i].back().t_end_s = posted.comms[i]->get_finish_time();
      forget(posted.comms[i]);
    }
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(slot));
  };
  while (!pending.empty()) {
    std::vector<sg4::CommPtr> waiting;
    for (size_t i : pending)
      waiting.push_back(posted.comms[i]);
    try {
      finish(static_cast<size_t>(sg4::Comm::wait_any(waiting)));
      continue;
    } catch (const simgrid::NetworkFailureException&) { // a link on the way went down
    }
    const double t_failed = sg4::Engine::get_clock();
    if (platform_.epoch_at(t_failed) == epoch) {
      if (epoch + 1 >= platform_.epoch_start_s.size()) // no newer routes: nothing avoids the link
        report_stall(rank, step, k);
      sg4::this_actor::sleep_until(platform_.epoch_start_s[epoch + 1]); // the fabric is still re-routing
      activities += 1;
    }
    epoch = enter_current_epoch(rank);
    const double t = sg4::Engine::get_clock();
    for (size_t slot = pending.size(); slot-- > 0;) {
      const size_t i = pending[slot];
      // Not Comm::test(): on a comm that failed it answers "done" without the exception, which
      // would take a lost message for a delivered one. A wait of zero time throws for a failed comm,
      // returns 0 for a completed one and -1 for one still under way.
      bool failed = false;
      try {
        if (sg4::Comm::wait_any_for({posted.comms[i]}, 0.0) == 0) {
          finish(slot);
          continue;
        }
      } catch (const simgrid::NetworkFailureException&) {
        failed = true;
      }
      if (!failed)
        continue;
      activities += 1;
      if (i >= posted.sends) { // receive again, whatever route the sender now takes
        posted.comms[i] = inbox(job_, rank, k, step, sequence)->get_async<int>(&posted.slots[i - posted.sends]);
        continue;
      }
      // Close the part that arrived and resend the rest over this epoch's route.
      auto& part = posted.parts[i].back();
      const auto noted = left_at_fault_.find(posted.comms[i].get());
      const double left = std::min(part.bytes, noted != left_at_fault_.end() ? noted->second : part.bytes);
      forget(posted.comms[i]);
      part.t_end_s = t_failed;
      part.bytes -= left;
      posted.parts[i].push_back({left, t, t, epoch});
      posted.comms[i] = inbox(job_, round.sends[i].dst, k, step, sequence)
                            ->put_async(&payload, static_cast<uint64_t>(std::ceil(left)));
      in_flight_.insert(posted.comms[i].get());
    }
  }
}

trace::TracePhase trace_kind(CollectivePart part) {
  switch (part) {
  case CollectivePart::ReduceScatter:
    return trace::TracePhase::ReduceScatter;
  case CollectivePart::AllGather:
    return trace::TracePhase::AllGather;
  default:
    return trace::TracePhase::AllReduce;
  }
}

void CollectiveRunner::simulate_round(long long rank, long long step, size_t k, double scale, long long sequence,
                                      trace::TracePhase kind, long long ordinal, double& sent, double& network_j,
                                      long long& activities) const {
  const auto r = static_cast<size_t>(rank);
  const size_t epoch = enter_current_epoch(rank);
  const RankRound& round = rounds_[epoch][r][k];
  const double t_round = sg4::Engine::get_clock();
  PostedRound posted;
  posted.sends = round.sends.size();
  for (const Send& s : round.sends) {
    posted.comms.push_back(
        inbox(job_, s.dst, k, step, sequence)->put_async(&payload, static_cast<uint64_t>(s.bytes * scale)));
    in_flight_.insert(posted.comms.back().get());
    posted.parts.push_back({{s.bytes * scale, t_round, t_round, epoch}});
  }
  posted.slots.assign(size_t(round.receives), nullptr);
  for (int i = 0; i < round.receives; ++i)
    posted.comms.push_back(inbox(job_, rank, k, step, sequence)->get_async<int>(&posted.slots[size_t(i)]));
  wait_round(posted, rank, step, k, epoch, sequence, activities);
  for (size_t i = 0; i < posted.sends; ++i)
    for (const PostedRound::Part& p : posted.parts[i]) {
      const Send& s = rounds_[p.epoch][r][k].sends[i];
      sent += p.bytes;
      network_j += p.bytes * s.j_per_byte;
      if (recorder_.tracing())
        recorder_.record_message({int32_t(rank), int32_t(s.dst), p.bytes, p.t_start_s, p.t_end_s,
                                  recorder_.collective_id(kind, ordinal), kind},
                                 s.links);
    }
  activities += static_cast<long long>(posted.comms.size());
  const double extra_latency_s = rounds_[platform_.epoch_at(sg4::Engine::get_clock())][r][k].extra_latency_s;
  if (extra_latency_s > 0) {
    sg4::this_actor::sleep_for(extra_latency_s);
    activities += 1;
  }
}

void CollectiveRunner::run(long long rank, long long step, CollectivePart part, double scale, long long sequence,
                           bool overlapped) const {
  const auto r = static_cast<size_t>(rank);
  const auto [first, last] = rounds_of(part);
  const long long ordinal = collectives_run_[r]++;
  const double t_start = sg4::Engine::get_clock();
  if (last_arrival_s_.size() <= size_t(ordinal))
    last_arrival_s_.resize(size_t(ordinal) + 1, 0.0);
  last_arrival_s_[size_t(ordinal)] = std::max(last_arrival_s_[size_t(ordinal)], t_start);
  double sent = 0, received_bytes = 0, network_j = 0;
  long long activities = 0;
  for (size_t k = first; k < last;) {
    if (!private_ || !private_->is_private(k)) {
      simulate_round(rank, step, k, scale, sequence, trace_kind(part), ordinal, sent, network_j, activities);
      received_bytes += rounds_[0][r][k].receive_bytes * scale;
      ++k;
      continue;
    }
    // A run of private rounds: timed at once, then counted as its messages would have been.
    size_t end = k + 1;
    while (end < last && private_->is_private(end))
      ++end;
    private_->run(rank, ordinal, k, end, scale);
    private_->tally(rank, k, end, scale, sent, received_bytes, network_j, activities);
    k = end;
  }
  recorder_.record_collective(rank, step, trace_kind(part), overlapped, t_start, sg4::Engine::get_clock(), sent,
                              received_bytes, network_j, activities);
  // Every member's data is in every result (all-reduce, reduce-scatter, all-gather over all GPUs):
  // all had arrived before this one could finish.
  if (!overlapped)
    recorder_.record_sync_wait(rank, trace_kind(part), last_arrival_s_[size_t(ordinal)] - t_start);
}

std::pair<size_t, size_t> CollectiveRunner::rounds_of(CollectivePart part) const {
  const size_t total = rounds_[0][0].size();
  return {part == CollectivePart::AllGather ? total / 2 : 0, part == CollectivePart::ReduceScatter ? total / 2 : total};
}

void CollectiveRunner::drop_finished(TimedStream& stream) {
  while (!stream.items.empty() && stream.items.front().done && !stream.items.front().awaited) {
    stream.items.pop_front();
    ++stream.base;
  }
}

long long CollectiveRunner::queue(long long rank, long long step, CollectivePart part, double scale,
                                 long long sequence, double ready_s, bool awaited) const {
  TimedStream& stream = streams_[size_t(rank)];
  stream.items.push_back({step, sequence, part, scale, ready_s, 0, 0, awaited});
  const long long ticket = stream.base + static_cast<long long>(stream.items.size()) - 1;
  if (!stream.busy)
    start_queued(rank);
  return ticket;
}

void CollectiveRunner::start_queued(long long rank) const {
  TimedStream& stream = streams_[size_t(rank)];
  Queued& q = stream.items[size_t(stream.running - stream.base)];
  stream.busy = true;
  // As on a stream actor: it starts when pushed, or when the collective before it returns.
  q.start_s = std::max(q.ready_s, stream.free_s);
  const auto [first, last] = rounds_of(q.part);
  private_->enter(rank, collectives_run_[size_t(rank)]++, first, last, q.scale, q.start_s);
}

void CollectiveRunner::queued_left(long long rank, double leave_s) const {
  TimedStream& stream = streams_[size_t(rank)];
  if (!stream.busy)
    return; // a collective its compute actor runs itself
  Queued& q = stream.items[size_t(stream.running - stream.base)];
  q.end_s = leave_s;
  q.done = true;
  const auto [first, last] = rounds_of(q.part);
  double sent = 0, received_bytes = 0, network_j = 0;
  long long activities = 0;
  private_->tally(rank, first, last, q.scale, sent, received_bytes, network_j, activities);
  recorder_.record_collective(rank, q.step, trace_kind(q.part), true, q.start_s, leave_s, sent, received_bytes,
                              network_j, activities);
  if (stream.waited == stream.running) {
    stream.waited = -1;
    private_->wake_later(stream.wake);
  }
  stream.busy = false;
  stream.free_s = leave_s;
  ++stream.running;
  drop_finished(stream);
  if (stream.running < stream.base + static_cast<long long>(stream.items.size()))
    start_queued(rank);
}

void CollectiveRunner::wait_queued(long long rank, long long ticket) const {
  TimedStream& stream = streams_[size_t(rank)];
  if (!stream.items[size_t(ticket - stream.base)].done) {
    if (!stream.wake)
      stream.wake = sg4::Semaphore::create(0);
    stream.waited = ticket;
    stream.wake->acquire();
  }
  Queued& q = stream.items[size_t(ticket - stream.base)];
  if (q.end_s > sg4::Engine::get_clock())
    sg4::this_actor::sleep_until(q.end_s);
  q.awaited = false;
  drop_finished(stream);
}

bool CollectiveRunner::queued_ended(long long rank, long long ticket, double& end_s) const {
  TimedStream& stream = streams_[size_t(rank)];
  Queued& q = stream.items[size_t(ticket - stream.base)];
  if (!q.done)
    return false;
  end_s = q.end_s;
  q.awaited = false;
  drop_finished(stream);
  return true;
}

} // namespace memwall::sim
