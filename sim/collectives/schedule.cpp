#include "schedule.hpp"

#include "channels.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace memwall::collectives {

bool is_power_of_two(long long n) { return n > 0 && (n & (n - 1)) == 0; }

long long tree_depth(long long gpus) {
  long long depth = 0;
  for (long long last = gpus - 1; last > 0; last = (last - 1) / 2)
    ++depth;
  return depth;
}

Schedule ring_schedule(const std::vector<long long>& order, double bytes, const std::vector<GpuPlace>& places,
                       long long channels) {
  const long long n = static_cast<long long>(order.size());
  Schedule s{"ring", {}};
  if (n < 2)
    return s;
  const std::vector<RingFlow> steps = channel_ring_flows(order, places, channels);
  for (const char* name : {"ring reduce-scatter", "ring all-gather"}) {
    Round r{name, {}, double(n - 2)};
    for (const RingFlow& f : steps) // share 1 (one channel) leaves the bytes exactly as one ring's
      r.flows.push_back({f.src, f.dst, f.share == 1.0 ? double(n - 1) * bytes / double(n)
                                                      : f.share * (double(n - 1) * bytes / double(n))});
    s.rounds.push_back(std::move(r));
  }
  return s;
}

Schedule hierarchical_schedule(long long gpus, long long g, double bytes) {
  if (g < 1 || gpus % g != 0)
    throw std::invalid_argument("hierarchical all-reduce needs servers of equal size");
  const long long m = gpus / g;
  Schedule s{"hierarchical", {}};
  auto intra = [&](const char* name) {
    Round r{name, {}, double(g - 2)};
    for (long long rank = 0; rank < gpus; ++rank) {
      const long long node = rank / g, local = rank % g;
      r.flows.push_back({rank, node * g + (local + 1) % g, double(g - 1) * bytes / double(g)});
    }
    return r;
  };
  auto inter = [&](const char* name) {
    Round r{name, {}, double(m - 2)};
    for (long long rank = 0; rank < gpus; ++rank) {
      const long long node = rank / g, local = rank % g;
      r.flows.push_back({rank, ((node + 1) % m) * g + local, double(m - 1) * (bytes / double(g)) / double(m)});
    }
    return r;
  };
  if (g > 1)
    s.rounds.push_back(intra("intra-server reduce-scatter"));
  if (m > 1) {
    s.rounds.push_back(inter("inter-server reduce-scatter"));
    s.rounds.push_back(inter("inter-server all-gather"));
  }
  if (g > 1)
    s.rounds.push_back(intra("intra-server all-gather"));
  return s;
}

Schedule double_tree_schedule(long long gpus, double bytes) {
  Schedule s{"tree", {}};
  if (gpus < 2)
    return s;
  const double depth = double(tree_depth(gpus));
  Round reduce{"tree reduce", {}, depth - 1}, broadcast{"tree broadcast", {}, depth - 1};
  for (int tree = 0; tree < 2; ++tree) {
    auto rank_of = [&](long long position) { return tree == 0 ? position : gpus - 1 - position; };
    for (long long child = 1; child < gpus; ++child) {
      const long long parent = (child - 1) / 2;
      reduce.flows.push_back({rank_of(child), rank_of(parent), bytes / 2});
      broadcast.flows.push_back({rank_of(parent), rank_of(child), bytes / 2});
    }
  }
  s.rounds = {reduce, broadcast};
  return s;
}

Schedule nvls_schedule(const std::vector<GpuPlace>& places, double bytes, double efficiency) {
  const long long n = static_cast<long long>(places.size());
  if (!(efficiency > 0))
    throw std::invalid_argument("nvls needs a fabric with NVLink SHARP (nvlink: {sharp: true})");
  if (n < 2)
    throw std::invalid_argument("nvls needs at least 2 GPUs");
  for (const GpuPlace& p : places)
    if (p.server < 0 || p.server != places.front().server)
      throw std::invalid_argument("nvls reduces inside one NVLink domain; these " + std::to_string(n) +
                                  " GPUs span several (NVLS across servers, with IB SHARP, is not modelled)");
  Round round{"nvls reduce + multicast", {}, 0};
  const double per_gpu = bytes * double(n + 1) / double(n) / efficiency;
  for (long long r = 0; r < n; ++r)
    round.flows.push_back({r, (r + 1) % n, per_gpu});
  return Schedule{"nvls", {std::move(round)}};
}

Schedule nccl_tree_schedule(const std::vector<GpuPlace>& places, double bytes, long long channels) {
  const long long n = static_cast<long long>(places.size());
  std::map<long long, std::vector<std::pair<long long, long long>>> servers; // server: (local, rank)
  for (long long rank = 0; rank < n; ++rank) {
    if (places[size_t(rank)].server < 0)
      return double_tree_schedule(n, bytes);
    servers[places[size_t(rank)].server].push_back({places[size_t(rank)].local, rank});
  }
  const long long g = servers.empty() ? 0 : static_cast<long long>(servers.begin()->second.size());
  bool even = g > 1;
  for (auto& [server, gpus] : servers) {
    std::sort(gpus.begin(), gpus.end());
    even = even && static_cast<long long>(gpus.size()) == g;
  }
  if (!even)
    return double_tree_schedule(n, bytes);
  const long long m = static_cast<long long>(servers.size());
  std::vector<const std::vector<std::pair<long long, long long>>*> by_index;
  for (const auto& entry : servers)
    by_index.push_back(&entry.second);
  channels = std::max(1LL, channels);
  const double share = bytes / 2 / double(channels); // per tree, per channel
  // Flows between one pair add up (the channels' messages to one peer travel as one).
  std::map<std::pair<long long, long long>, double> chain, across;
  for (long long c = 0; c < channels; ++c) {
    const long long head = c * g / channels; // tree 0's head; tree 1's is the GPU before it
    auto rank = [&](const std::vector<std::pair<long long, long long>>& gpus, long long position) {
      return gpus[size_t((head + position) % g)].second;
    };
    for (const auto* gpus : by_index)
      for (long long j = 0; j + 1 < g; ++j) {
        chain[{rank(*gpus, j + 1), rank(*gpus, j)}] += share; // tree 0: towards position 0
        chain[{rank(*gpus, j), rank(*gpus, j + 1)}] += share; // tree 1: towards position g - 1
      }
    for (int tree = 0; tree < 2; ++tree) {
      const long long at = tree == 0 ? 0 : g - 1;
      auto head_of = [&](long long p) { return rank(*by_index[size_t(tree == 0 ? p : m - 1 - p)], at); };
      for (long long child = 1; child < m; ++child)
        across[{head_of(child), head_of((child - 1) / 2)}] += share;
    }
  }
  auto round_of = [](const char* name, const std::map<std::pair<long long, long long>, double>& flows, double extra,
                     bool reversed) {
    Round r{name, {}, extra};
    for (const auto& [pair, b] : flows)
      r.flows.push_back(reversed ? Flow{pair.second, pair.first, b} : Flow{pair.first, pair.second, b});
    return r;
  };
  Schedule s{"tree", {round_of("tree chain reduce", chain, double(g - 2), false)}};
  if (m > 1) {
    s.rounds.push_back(round_of("tree reduce across servers", across, double(tree_depth(m) - 1), false));
    s.rounds.push_back(round_of("tree broadcast across servers", across, double(tree_depth(m) - 1), true));
  }
  s.rounds.push_back(round_of("tree chain broadcast", chain, double(g - 2), true));
  return s;
}

Schedule halving_doubling_schedule(long long gpus, double bytes) {
  if (!is_power_of_two(gpus))
    throw std::invalid_argument("halving-doubling needs a power-of-two GPU count, got " + std::to_string(gpus));
  Schedule s{"halving-doubling", {}};
  std::vector<Round> halving;
  double chunk = bytes;
  for (long long distance = 1; distance < gpus; distance *= 2) {
    chunk /= 2;
    Round r{"halving, distance " + std::to_string(distance), {}, 0};
    for (long long rank = 0; rank < gpus; ++rank)
      r.flows.push_back({rank, rank ^ distance, chunk});
    halving.push_back(std::move(r));
  }
  s.rounds = halving;
  for (auto it = halving.rbegin(); it != halving.rend(); ++it) {
    Round r = *it;
    r.name.replace(0, 7, "doubling");
    s.rounds.push_back(std::move(r));
  }
  return s;
}

} // namespace memwall::collectives
