#include "channels.hpp"

#include <algorithm>
#include <utility>

namespace memwall::collectives {

namespace {

// Positions in `order`, server by server (each run by local rank), starting at a server boundary so
// that a server split by the ring's wrap is one run. Empty when the ring stays in one server.
std::vector<std::vector<size_t>> server_runs(const std::vector<long long>& order, const std::vector<GpuPlace>& places,
                                             std::vector<long long>& server) {
  const size_t n = order.size();
  server.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const long long rank = order[i];
    const long long s = rank < static_cast<long long>(places.size()) ? places[size_t(rank)].server : -1;
    server[i] = s >= 0 ? s : -1 - static_cast<long long>(i);
  }
  size_t start = n;
  for (size_t i = 0; i < n && start == n; ++i)
    if (server[i] != server[(i + n - 1) % n])
      start = i;
  std::vector<std::vector<size_t>> runs;
  if (start == n)
    return runs;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (start + k) % n;
    if (k == 0 || server[i] != server[(i + n - 1) % n])
      runs.emplace_back();
    runs.back().push_back(i);
  }
  auto local = [&](size_t i) {
    const long long rank = order[i];
    return rank < static_cast<long long>(places.size()) ? places[size_t(rank)].local : 0;
  };
  for (auto& run : runs)
    std::stable_sort(run.begin(), run.end(), [&](size_t a, size_t b) { return local(a) < local(b); });
  return runs;
}

// Channel c's entry index into each run, and whether each run is then left from the next run's entry
// index (rail-aligned) or from the index before its own entry (turned).
struct ChannelPlan {
  std::vector<size_t> entry;
  bool aligned = false;
};

ChannelPlan plan_channel(const std::vector<std::vector<size_t>>& runs, long long c, long long channels) {
  const size_t m = runs.size(), len = runs.front().size();
  bool equal = true;
  for (const auto& run : runs)
    equal = equal && run.size() == len;
  ChannelPlan plan;
  plan.aligned = equal && len >= 2 && (m % 2 == 0 || len >= 3);
  for (size_t k = 0; k < m; ++k) {
    const size_t size = runs[k].size();
    const size_t offset = size_t((c * static_cast<long long>(size)) / channels);
    if (!plan.aligned) {
      plan.entry.push_back(offset % size);
      continue;
    }
    const size_t step = m % 2 == 1 && k == m - 1 ? 2 : k % 2;
    plan.entry.push_back((offset + step) % size);
  }
  return plan;
}

} // namespace

std::vector<RingFlow> channel_ring_flows(const std::vector<long long>& order, const std::vector<GpuPlace>& places,
                                         long long channels) {
  const size_t n = order.size();
  std::vector<RingFlow> flows;
  if (n < 2)
    return flows;
  std::vector<long long> server;
  const std::vector<std::vector<size_t>> runs = channels > 1 ? server_runs(order, places, server)
                                                             : std::vector<std::vector<size_t>>{};
  if (runs.empty()) { // one channel, or one server: the ring as ordered
    for (size_t i = 0; i < n; ++i)
      flows.push_back({order[i], order[(i + 1) % n], 1.0});
    return flows;
  }
  // Per position in `order`: (destination position, channels that send that way), in first-use order.
  std::vector<std::vector<std::pair<size_t, long long>>> sends(n);
  auto add = [&](size_t from, size_t to) {
    auto& mine = sends[from];
    auto it = std::find_if(mine.begin(), mine.end(), [&](const auto& d) { return d.first == to; });
    if (it == mine.end())
      mine.emplace_back(to, 1);
    else
      ++it->second;
  };
  const size_t m = runs.size();
  for (long long c = 0; c < channels; ++c) {
    const ChannelPlan plan = plan_channel(runs, c, channels);
    for (size_t k = 0; k < m; ++k) {
      const std::vector<size_t>& run = runs[k];
      const std::vector<size_t>& next = runs[(k + 1) % m];
      const size_t len = run.size(), in = plan.entry[k], next_in = plan.entry[(k + 1) % m];
      // Aligned: leave from the next server's entry index; turned: from the index before the entry.
      const size_t out = plan.aligned ? next_in : (in + len - 1) % len;
      // Entry, the others in turn, exit: down the local indices when the exit is just above the entry
      // (in, in - 1, ..., in + 1), else up. Aligned rings alternate the two server by server, the
      // same for every channel, so each GPU sends to one GPU of its server and at most one beyond
      // (a round whose links carry one message each is timed without SimGrid messages).
      std::vector<size_t> path{in};
      if (len > 2 && out == (in + 1) % len) {
        for (size_t j = 1; j < len; ++j)
          path.push_back((in + len - j) % len);
      } else {
        for (size_t j = 1; j < len; ++j)
          if (const size_t idx = (in + j) % len; idx != out)
            path.push_back(idx);
        if (out != in)
          path.push_back(out);
      }
      for (size_t j = 0; j + 1 < path.size(); ++j)
        add(run[path[j]], run[path[j + 1]]);
      add(run[out], next[next_in]);
    }
  }
  for (size_t i = 0; i < n; ++i) { // senders in `order`'s order, as the single ring lists them
    auto& mine = sends[i];
    // the in-server destinations first, then across, each in first-use order
    std::stable_partition(mine.begin(), mine.end(), [&](const auto& d) { return server[d.first] == server[i]; });
    for (const auto& [to, used] : mine)
      flows.push_back({order[i], order[to], double(used) / double(channels)});
  }
  return flows;
}

std::vector<GpuPlace> places_of_ranks(const topologies::FabricGraph& graph) {
  const auto gpus = topologies::gpu_vertices(graph);
  std::vector<GpuPlace> places(gpus.size());
  for (size_t r = 0; r < gpus.size(); ++r)
    places[r] = {graph[gpus[r]].node, graph[gpus[r]].local_rank};
  return places;
}

long long default_channels(const topologies::FabricSpec& fabric) {
  if (fabric.kind == "cluster" && fabric.cluster.nic_per_gpu)
    return std::clamp(fabric.cluster.gpus_per_node, 1LL, kMaxChannels);
  return 1;
}

} // namespace memwall::collectives
