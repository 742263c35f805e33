#include "sim/engine/private_rounds.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

bool simulate_every_message() {
  const char* v = std::getenv("MEMWALL_SIMULATE_MESSAGES");
  return v && *v && std::string(v) != "0";
}

PrivateRounds::PrivateRounds(size_t gpus, std::vector<bool> private_rounds)
    : rounds_(private_rounds.size()), private_(std::move(private_rounds)), cells_(gpus * rounds_),
      receive_bytes_(gpus * rounds_, 0.0), extra_latency_s_(gpus * rounds_, 0.0), gpus_(gpus) {}

void PrivateRounds::add_message(long long src, long long dst, size_t round, double bytes, double latency_s,
                                double bandwidth_bytes_per_s, double j_per_byte) {
  messages_.push_back({src, dst, round, bytes, latency_s, bandwidth_bytes_per_s, j_per_byte});
}

void PrivateRounds::set_round(long long rank, size_t round, double receive_bytes, double extra_latency_s) {
  receive_bytes_[slot(rank, round)] = receive_bytes;
  extra_latency_s_[slot(rank, round)] = extra_latency_s;
}

void PrivateRounds::finish() {
  // Sends grouped by (round, sender), in schedule order within a group (a stable sort).
  std::stable_sort(messages_.begin(), messages_.end(), [](const Message& a, const Message& b) {
    return a.round != b.round ? a.round < b.round : a.src < b.src;
  });
  const size_t slots = cells_.size();
  send_begin_.assign(slots + 1, 0);
  receive_begin_.assign(slots + 1, 0);
  for (const Message& m : messages_) {
    ++send_begin_[slot(m.src, m.round) + 1];
    ++receive_begin_[slot(m.dst, m.round) + 1];
  }
  for (size_t i = 0; i < slots; ++i) {
    send_begin_[i + 1] += send_begin_[i];
    receive_begin_[i + 1] += receive_begin_[i];
  }
  receives_.assign(messages_.size(), 0);
  std::vector<size_t> fill(receive_begin_.begin(), receive_begin_.end() - 1);
  // A GPU's receives of one round are only counted and waited for together: their order does not matter.
  for (size_t i = 0; i < messages_.size(); ++i)
    receives_[fill[slot(messages_[i].dst, messages_[i].round)]++] = i;
}

size_t PrivateRounds::private_count() const {
  return size_t(std::count(private_.begin(), private_.end(), true));
}

double PrivateRounds::end_time(const Message& m, double scale, double start_s) {
  // SimGrid sends whole bytes (put_async takes an integer size). A path with latency first waits it
  // out (an event at latency + start), then the transfer ends at that date + remaining / rate.
  const auto bytes = static_cast<double>(static_cast<uint64_t>(m.bytes * scale));
  const double transfer_from_s = m.latency_s > 0 ? m.latency_s + start_s : start_s;
  return transfer_from_s + bytes / m.bandwidth_bytes_per_s;
}

void PrivateRounds::close_round(long long rank, size_t round, std::vector<Arrival>& next) {
  double t_s = cell(rank, round).last_end_s;
  // As CollectiveRunner: the round's extra latency is a sleep after its last message.
  if (const double extra_s = extra_latency_s_[slot(rank, round)]; extra_s > 0)
    t_s = t_s + extra_s;
  next.push_back({rank, round + 1, t_s});
}

void PrivateRounds::join(long long arriving, long long other, const Message& m, double start_s, double scale,
                         std::vector<Arrival>& next) {
  const double end_s = end_time(m, scale, start_s);
  Cell& a = cell(arriving, m.round);
  a.last_end_s = std::max(a.last_end_s, end_s);
  Cell& o = cell(other, m.round);
  o.last_end_s = std::max(o.last_end_s, end_s);
  if (--o.missing == 0) // the other end counted this message as missing when it arrived
    close_round(other, m.round, next);
}

void PrivateRounds::settle(Arrival first, long long ordinal, double scale) {
  std::vector<Arrival>& next = next_;
  next.assign(1, first);
  const auto tag = static_cast<int32_t>(ordinal);
  while (!next.empty()) {
    const Arrival a = next.back();
    next.pop_back();
    Gpu& gpu = gpus_[size_t(a.rank)];
    if (a.round == gpu.end) { // it leaves the run
      gpu.leave_s = a.t_s;
      gpu.left = true;
      if (gpu.waiting)
        wake_.push_back(a.rank);
      continue;
    }
    Cell& mine = cell(a.rank, a.round);
    mine.ordinal = tag;
    mine.arrival_s = a.t_s;
    mine.last_end_s = a.t_s; // a round without messages ends where it starts
    int32_t missing = 0;
    // A message starts when both ends have posted it: at the later arrival. The other end is there
    // when its cell of this round was last written by this collective.
    const size_t i = slot(a.rank, a.round);
    for (size_t s = send_begin_[i]; s < send_begin_[i + 1]; ++s) {
      const Message& m = messages_[s];
      const Cell& other = cell(m.dst, a.round);
      if (other.ordinal != tag)
        ++missing;
      else
        join(a.rank, m.dst, m, std::max(a.t_s, other.arrival_s), scale, next);
    }
    for (size_t r = receive_begin_[i]; r < receive_begin_[i + 1]; ++r) {
      const Message& m = messages_[receives_[r]];
      const Cell& other = cell(m.src, a.round);
      if (other.ordinal != tag)
        ++missing;
      else
        join(a.rank, m.src, m, std::max(a.t_s, other.arrival_s), scale, next);
    }
    mine.missing = missing;
    if (missing == 0)
      close_round(a.rank, a.round, next);
  }
}

void PrivateRounds::run(long long rank, long long ordinal, size_t first, size_t end, double scale) {
  Gpu& gpu = gpus_[size_t(rank)];
  gpu.end = end;
  gpu.left = false;
  settle({rank, first, sg4::Engine::get_clock()}, ordinal, scale);
  // Waking is a SimGrid call, during which other actors may run (and settle): only once the flow is done.
  std::vector<long long> wake;
  wake.swap(wake_);
  for (const long long other : wake) {
    gpus_[size_t(other)].waiting = false;
    gpus_[size_t(other)].wake->release();
  }
  wake.clear();
  if (wake_.empty())
    wake_.swap(wake); // keep the buffer
  if (!gpu.left) {    // a GPU it exchanges with has not arrived: that arrival will complete these times
    if (!gpu.wake)
      gpu.wake = sg4::Semaphore::create(0);
    gpu.waiting = true;
    gpu.wake->acquire();
  }
  sg4::this_actor::sleep_until(gpu.leave_s);
}

void PrivateRounds::tally(long long rank, size_t first, size_t end, double scale, double& sent,
                          double& received, double& network_j, long long& activities) const {
  for (size_t k = first; k < end; ++k) {
    const size_t i = slot(rank, k);
    for (size_t s = send_begin_[i]; s < send_begin_[i + 1]; ++s) {
      sent += messages_[s].bytes * scale;
      network_j += messages_[s].bytes * scale * messages_[s].j_per_byte;
    }
    received += receive_bytes_[i] * scale;
    activities += static_cast<long long>(send_begin_[i + 1] - send_begin_[i] + receive_begin_[i + 1] -
                                         receive_begin_[i]) +
                  (extra_latency_s_[i] > 0);
  }
}

} // namespace memwall::sim
