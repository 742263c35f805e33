#include "sim/engine/private_rounds.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

bool simulate_every_message() {
  const char* v = std::getenv("MEMWALL_SIMULATE_MESSAGES");
  return v && *v && std::string(v) != "0";
}

PrivateRounds::PrivateRounds(size_t gpus, std::vector<bool> private_rounds)
    : rounds_(private_rounds.size()), private_(std::move(private_rounds)), cells_(gpus * rounds_ + 1),
      receive_bytes_(gpus * rounds_, 0.0), gpus_(gpus) {}

void PrivateRounds::add_message(long long src, long long dst, size_t round, double bytes, double latency_s,
                                double bandwidth_bytes_per_s, double j_per_byte) {
  added_.push_back({src, dst, round, bytes, latency_s, bandwidth_bytes_per_s, j_per_byte});
}

void PrivateRounds::set_round(long long rank, size_t round, double receive_bytes, double extra_latency_s) {
  receive_bytes_[slot(rank, round)] = receive_bytes;
  cells_[slot(rank, round)].extra_latency_s = extra_latency_s;
}

void PrivateRounds::finish() {
  // Sends grouped by (round, sender), in schedule order within a group (a stable sort).
  std::stable_sort(added_.begin(), added_.end(), [](const Added& a, const Added& b) {
    return a.round != b.round ? a.round < b.round : a.src < b.src;
  });
  const size_t slots = cells_.size() - 1;
  std::vector<uint32_t> sends(slots + 1, 0), receives(slots + 1, 0);
  for (const Added& m : added_) {
    ++sends[slot(m.src, m.round) + 1];
    ++receives[slot(m.dst, m.round) + 1];
  }
  for (size_t i = 0; i < slots; ++i) {
    sends[i + 1] += sends[i];
    receives[i + 1] += receives[i];
  }
  for (size_t i = 0; i <= slots; ++i) {
    cells_[i].send_begin = sends[i];
    cells_[i].receive_begin = receives[i];
  }
  messages_.reserve(added_.size());
  std::map<Kind, uint32_t> kind_of;
  receives_.assign(added_.size(), 0);
  // A GPU's receives of one round are only counted and waited for together: their order does not matter.
  for (size_t i = 0; i < added_.size(); ++i) {
    const Added& m = added_[i];
    const Kind kind{m.bytes, m.latency_s, m.bandwidth_bytes_per_s, m.j_per_byte};
    auto [it, fresh] = kind_of.try_emplace(kind, static_cast<uint32_t>(kinds_.size()));
    if (fresh)
      kinds_.push_back(kind);
    messages_.push_back({static_cast<int32_t>(m.src), static_cast<int32_t>(m.dst), it->second});
    receives_[receives[slot(m.dst, m.round)]++] = static_cast<uint32_t>(i);
  }
  added_ = {};
}

size_t PrivateRounds::private_count() const {
  return size_t(std::count(private_.begin(), private_.end(), true));
}

double PrivateRounds::end_time(const Message& m, double scale, double start_s) const {
  // SimGrid sends whole bytes (put_async takes an integer size). A path with latency first waits it
  // out (an event at latency + start), then the transfer ends at that date + remaining / rate.
  const Kind& k = kinds_[m.kind];
  const auto bytes = static_cast<double>(static_cast<uint64_t>(k.bytes * scale));
  const double transfer_from_s = k.latency_s > 0 ? k.latency_s + start_s : start_s;
  return transfer_from_s + bytes / k.bandwidth_bytes_per_s;
}

void PrivateRounds::close_round(long long rank, size_t round, std::vector<Arrival>& next) {
  const Cell& c = cell(rank, round);
  double t_s = c.last_end_s;
  // As CollectiveRunner: the round's extra latency is a sleep after its last message.
  if (c.extra_latency_s > 0)
    t_s = t_s + c.extra_latency_s;
  next.push_back({rank, round + 1, t_s});
}

void PrivateRounds::join(long long arriving, long long other, size_t round, const Message& m, double start_s,
                         std::vector<Arrival>& next) {
  const double end_s = end_time(m, gpus_[size_t(arriving)].scale, start_s);
  Cell& a = cell(arriving, round);
  a.last_end_s = std::max(a.last_end_s, end_s);
  Cell& o = cell(other, round);
  o.last_end_s = std::max(o.last_end_s, end_s);
  if (--o.missing == 0) // the other end counted this message as missing when it arrived
    close_round(other, round, next);
}

void PrivateRounds::settle() {
  // First in, first out: the flow then sweeps round by round, and a round's cells (rank after rank)
  // stay in cache; the order changes no time (a round ends at the latest of its messages' ends).
  std::vector<Arrival>& next = next_;
  for (size_t head = 0; head < next.size(); ++head) {
    const Arrival a = next[head];
    Gpu& gpu = gpus_[size_t(a.rank)];
    if (a.round == gpu.end) { // it leaves the run
      gpu.leave_s = a.t_s;
      gpu.left = true;
      if (gpu.waiting) {
        gpu.waiting = false;
        wake_later(gpu.wake);
      }
      if (on_leave_)
        on_leave_(a.rank, a.t_s);
      continue;
    }
    const int32_t tag = gpu.ordinal;
    Cell& mine = cell(a.rank, a.round);
    mine.ordinal = tag;
    mine.arrival_s = a.t_s;
    mine.last_end_s = a.t_s; // a round without messages ends where it starts
    int32_t missing = 0;
    // A message starts when both ends have posted it: at the later arrival. The other end is there
    // when its cell of this round was last written by this collective.
    const Cell& after = (&mine)[1]; // where the next slot's messages begin
    for (uint32_t s = mine.send_begin; s < after.send_begin; ++s) {
      const Message& m = messages_[s];
      const Cell& other = cell(m.dst, a.round);
      if (other.ordinal != tag)
        ++missing;
      else
        join(a.rank, m.dst, a.round, m, std::max(a.t_s, other.arrival_s), next);
    }
    for (uint32_t r = mine.receive_begin; r < after.receive_begin; ++r) {
      const Message& m = messages_[receives_[r]];
      const Cell& other = cell(m.src, a.round);
      if (other.ordinal != tag)
        ++missing;
      else
        join(a.rank, m.src, a.round, m, std::max(a.t_s, other.arrival_s), next);
    }
    mine.missing = missing;
    if (missing == 0)
      close_round(a.rank, a.round, next);
  }
  next.clear();
}

void PrivateRounds::enter(long long rank, long long ordinal, size_t first, size_t end, double scale,
                          double t_s) {
  Gpu& gpu = gpus_[size_t(rank)];
  gpu.ordinal = static_cast<int32_t>(ordinal);
  gpu.scale = scale;
  gpu.end = end;
  gpu.left = false;
  next_.push_back({rank, first, t_s});
  if (settling_)
    return; // from a leave hook: the settle under way takes it
  settling_ = true;
  settle();
  settling_ = false;
  std::vector<simgrid::s4u::SemaphorePtr> wake;
  wake.swap(wake_);
  for (const auto& semaphore : wake)
    semaphore->release();
}

void PrivateRounds::run(long long rank, long long ordinal, size_t first, size_t end, double scale) {
  enter(rank, ordinal, first, end, scale, sg4::Engine::get_clock());
  Gpu& gpu = gpus_[size_t(rank)];
  if (!gpu.left) { // a GPU it exchanges with has not arrived: that arrival will complete these times
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
    const Cell& c = cells_[i];
    const Cell& after = cells_[i + 1];
    for (uint32_t s = c.send_begin; s < after.send_begin; ++s) {
      const Kind& k = kinds_[messages_[s].kind];
      sent += k.bytes * scale;
      network_j += k.bytes * scale * k.j_per_byte;
    }
    received += receive_bytes_[i] * scale;
    activities +=
        static_cast<long long>(after.send_begin - c.send_begin + after.receive_begin - c.receive_begin) +
        (c.extra_latency_s > 0);
  }
}

} // namespace memwall::sim
