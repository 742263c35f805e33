#include "ring_allreduce.hpp"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

RingAllReduce::RingAllReduce(const Platform& platform, RunRecorder& recorder) : recorder_(recorder) {
  const size_t n = platform.gpus.size();
  for (size_t i = 0; i < n; ++i) {
    mailboxes_.push_back(sg4::Mailbox::by_name("ring-" + platform.gpus[i]->get_name()));
    std::vector<sg4::Link*> links;
    double latency = 0;
    platform.gpus[i]->route_to(platform.gpus[(i + 1) % n], links, &latency);
    double pj_per_bit = 0;
    std::vector<std::string> names;
    for (const sg4::Link* link : links) {
      double link_pj = 0;
      if (auto it = platform.pj_per_bit.find(link->get_name()); it != platform.pj_per_bit.end())
        link_pj = it->second;
      pj_per_bit += link_pj;
      names.push_back(link->get_name());
      recorder.register_link(link->get_name(), "gpu-switch", link->get_bandwidth(), 8.0 * link_pj * 1e-12);
    }
    next_route_links_.push_back(std::move(names));
    next_route_latency_s_.push_back(latency);
    next_route_j_per_byte_.push_back(8.0 * pj_per_bit * 1e-12);
  }
}

void RingAllReduce::run(long long rank, long long step, double gradient_bytes) const {
  const long long n = static_cast<long long>(mailboxes_.size());
  if (n < 2 || gradient_bytes <= 0)
    return;
  const auto r = static_cast<size_t>(rank);
  const double phase_bytes = double(n - 1) * gradient_bytes / double(n);
  const double t_start = sg4::Engine::get_clock();
  static int payload = 0; // the data itself is not simulated, only its size
  long long activities = 0;
  for (int phase = 0; phase < 2; ++phase) { // reduce-scatter, then all-gather
    const double t_phase = sg4::Engine::get_clock();
    sg4::CommPtr send = mailboxes_[(r + 1) % size_t(n)]->put_async(&payload, static_cast<uint64_t>(phase_bytes));
    int* received = nullptr;
    sg4::CommPtr recv = mailboxes_[r]->get_async<int>(&received);
    send->wait();
    const double t_sent = sg4::Engine::get_clock();
    recv->wait();
    if (recorder_.tracing())
      recorder_.record_message({int32_t(rank), int32_t((r + 1) % size_t(n)), phase_bytes, t_phase, t_sent, step},
                               next_route_links_[r]);
    activities += 2;
    if (n > 2) {
      simgrid::s4u::this_actor::sleep_for(double(n - 2) * next_route_latency_s_[r]);
      activities += 1;
    }
  }
  const double sent = 2.0 * phase_bytes;
  recorder_.record_collective(rank, step, t_start, sg4::Engine::get_clock(), sent, sent,
                              sent * next_route_j_per_byte_[r], activities);
}

} // namespace memwall::sim
