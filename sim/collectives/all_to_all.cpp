#include "all_to_all.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace memwall::collectives {

namespace {

// A GPU without a server is a server of its own.
std::pair<long long, long long> server_of(const std::vector<GpuPlace>& places, long long rank) {
  const GpuPlace& p = places[size_t(rank)];
  return p.server >= 0 ? std::pair{0LL, p.server} : std::pair{1LL, rank};
}

} // namespace

bool pxn_applies(const topologies::FabricSpec& fabric) {
  return fabric.kind == "cluster" && fabric.cluster.nic_per_gpu && fabric.cluster.gpus_per_node > 1;
}

std::vector<Flow> all_to_all_flows(const std::vector<long long>& ranks, const std::vector<GpuPlace>& places,
                                   bool pxn, double unit) {
  std::map<std::pair<long long, long long>, long long> rank_at; // (server, local) -> rank
  for (long long rank : ranks)
    if (places[size_t(rank)].server >= 0)
      rank_at[{places[size_t(rank)].server, places[size_t(rank)].local}] = rank;
  std::map<std::pair<long long, long long>, double> bytes;
  for (long long src : ranks)
    for (long long dst : ranks) {
      if (src == dst)
        continue;
      const GpuPlace& a = places[size_t(src)];
      const GpuPlace& b = places[size_t(dst)];
      const auto relay = pxn && a.server >= 0 && b.server >= 0 ? rank_at.find({a.server, b.local}) : rank_at.end();
      if (a.server == b.server || relay == rank_at.end() || relay->second == src) {
        bytes[{src, dst}] += unit;
        continue;
      }
      bytes[{src, relay->second}] += unit; // NVLink to the rail-matched GPU
      bytes[{relay->second, dst}] += unit; // its NIC, on the destination's rail
    }
  std::vector<Flow> flows;
  flows.reserve(bytes.size());
  for (const auto& [pair, b] : bytes)
    flows.push_back({pair.first, pair.second, b});
  return flows;
}

std::vector<Flow> all_to_all_stand_ins(const std::vector<Flow>& flows, const std::vector<long long>& ranks,
                                       const std::vector<GpuPlace>& places) {
  // The communicator's GPUs by server, each server's by local rank; the servers in order.
  std::map<std::pair<long long, long long>, std::vector<long long>> by_server;
  for (long long rank : ranks)
    by_server[server_of(places, rank)].push_back(rank);
  for (auto& [server, gpus] : by_server)
    std::sort(gpus.begin(), gpus.end(),
              [&](long long a, long long b) { return places[size_t(a)].local < places[size_t(b)].local; });
  std::map<long long, double> local_bytes, remote_bytes; // per sender
  for (const Flow& f : flows)
    (server_of(places, f.src) == server_of(places, f.dst) ? local_bytes : remote_bytes)[f.src] += f.bytes;
  std::vector<Flow> out;
  for (auto s = by_server.begin(); s != by_server.end(); ++s) {
    const std::vector<long long>& gpus = s->second;
    auto next_server = std::next(s) == by_server.end() ? by_server.begin() : std::next(s);
    for (size_t i = 0; i < gpus.size(); ++i) {
      const long long src = gpus[i];
      if (const auto b = local_bytes.find(src); b != local_bytes.end())
        out.push_back({src, gpus[(i + 1) % gpus.size()], b->second});
      const auto b = remote_bytes.find(src);
      if (b == remote_bytes.end())
        continue;
      const std::vector<long long>& there = next_server->second;
      const auto dst = std::find_if(there.begin(), there.end(), [&](long long r) {
        return places[size_t(r)].local == places[size_t(src)].local || places[size_t(src)].server < 0;
      });
      if (next_server == s || dst == there.end())
        return {};
      out.push_back({src, *dst, b->second});
    }
  }
  return out;
}

} // namespace memwall::collectives
