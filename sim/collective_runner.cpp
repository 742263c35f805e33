#include "collective_runner.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <map>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

CollectiveRunner::CollectiveRunner(const collectives::Schedule& schedule, const Platform& platform,
                                   RunRecorder& recorder, double message_latency_s, FaultLog* faults)
    : algorithm_(schedule.algorithm), recorder_(recorder), faults_(faults) {
  const size_t n = platform.gpus.size();
  const size_t rounds = schedule.rounds.size();
  rounds_.assign(n, std::vector<RankRound>(rounds));
  std::map<std::pair<long long, long long>, Send> route_cache;
  for (size_t k = 0; k < rounds; ++k) {
    const collectives::Round& round = schedule.rounds[k];
    for (const collectives::Flow& f : round.flows) {
      auto [it, fresh] = route_cache.try_emplace({f.src, f.dst});
      Send& route = it->second;
      if (fresh) {
        std::vector<sg4::Link*> links;
        route.latency_s = 0;
        platform.gpus[size_t(f.src)]->route_to(platform.gpus[size_t(f.dst)], links, &route.latency_s);
        double pj_per_bit = 0;
        for (const sg4::Link* link : links) {
          double link_pj = 0;
          if (auto p = platform.pj_per_bit.find(link->get_name()); p != platform.pj_per_bit.end())
            link_pj = p->second;
          pj_per_bit += link_pj;
          route.links.push_back(link->get_name());
          recorder.register_link(link->get_name(), platform.link_class.count(link->get_name())
                                                       ? platform.link_class.at(link->get_name())
                                                       : "",
                                 link->get_bandwidth(), 8.0 * link_pj * 1e-12);
        }
        route.j_per_byte = 8.0 * pj_per_bit * 1e-12;
      }
      Send send = route;
      send.dst = f.dst;
      send.bytes = f.bytes;
      RankRound& mine = rounds_[size_t(f.src)][k];
      mine.sends.push_back(send);
      // The aggregated message pays its route latency once; the round's other steps pay it again,
      // and every step pays the software message latency.
      mine.extra_latency_s =
          std::max(mine.extra_latency_s, round.extra_latency_steps * send.latency_s +
                                             (1.0 + round.extra_latency_steps) * message_latency_s);
      rounds_[size_t(f.dst)][k].receives += 1;
      rounds_[size_t(f.dst)][k].receive_bytes += f.bytes;
    }
  }
}

namespace {

sg4::Mailbox* inbox(long long rank, size_t round, long long step, long long sequence) {
  // Step parity keeps a fast GPU's next-step messages apart from a slow one's current ones.
  return sg4::Mailbox::by_name("ar-" + std::to_string(rank) + "-" + std::to_string(round) + "-" +
                               std::to_string(step % 2) + "-" + std::to_string(sequence));
}

} // namespace

void CollectiveRunner::report_stall(long long rank, long long step, size_t round) const {
  if (faults_ && faults_->stall.empty()) {
    std::string links;
    for (const auto& line : faults_->applied)
      links += (links.empty() ? "" : "; ") + line;
    faults_->stall = "the all-reduce stalled at t = " + std::to_string(sg4::Engine::get_clock()) + " s (step " +
                     std::to_string(step) + ", round " + std::to_string(round) + ", GPU " + std::to_string(rank) +
                     "): a message lost its path after " + links +
                     ". Static routes avoid only links that are down from t = 0; no retransmission is modelled.";
  }
  sg4::Actor::kill_all();
  sg4::this_actor::exit();
}

void CollectiveRunner::run(long long rank, long long step, CollectivePart part, double scale,
                           long long sequence) const {
  const auto r = static_cast<size_t>(rank);
  const size_t total_rounds = rounds_[r].size();
  const size_t first = part == CollectivePart::AllGather ? total_rounds / 2 : 0;
  const size_t last = part == CollectivePart::ReduceScatter ? total_rounds / 2 : total_rounds;
  const double t_start = sg4::Engine::get_clock();
  static int payload = 0; // the data itself is not simulated, only its size
  double sent = 0, received_bytes = 0, network_j = 0;
  long long activities = 0;
  for (size_t k = first; k < last; ++k) {
    const RankRound& round = rounds_[r][k];
    const double t_round = sg4::Engine::get_clock();
    std::vector<sg4::CommPtr> sends, receives;
    for (const Send& s : round.sends)
      sends.push_back(inbox(s.dst, k, step, sequence)->put_async(&payload, static_cast<uint64_t>(s.bytes * scale)));
    std::vector<int*> slots(size_t(round.receives), nullptr);
    sg4::Mailbox* mine = inbox(rank, k, step, sequence);
    for (int i = 0; i < round.receives; ++i)
      receives.push_back(mine->get_async<int>(&slots[size_t(i)]));
    std::vector<double> sent_at(sends.size());
    try {
      for (size_t i = 0; i < sends.size(); ++i) {
        sends[i]->wait();
        sent_at[i] = sg4::Engine::get_clock();
      }
      for (auto& c : receives)
        c->wait();
    } catch (const simgrid::NetworkFailureException&) { // a link on the way went down
      report_stall(rank, step, k);
    }
    for (size_t i = 0; i < sends.size(); ++i) {
      const Send& s = round.sends[i];
      sent += s.bytes * scale;
      network_j += s.bytes * scale * s.j_per_byte;
      if (recorder_.tracing())
        recorder_.record_message(
            {int32_t(rank), int32_t(s.dst), s.bytes * scale, t_round, sent_at[i], step}, s.links);
    }
    received_bytes += round.receive_bytes * scale;
    activities += static_cast<long long>(sends.size() + receives.size());
    if (round.extra_latency_s > 0) {
      sg4::this_actor::sleep_for(round.extra_latency_s);
      activities += 1;
    }
  }
  recorder_.record_collective(rank, step, t_start, sg4::Engine::get_clock(), sent, received_bytes, network_j,
                              activities);
}

} // namespace memwall::sim
