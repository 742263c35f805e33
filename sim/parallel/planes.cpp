#include "planes.hpp"

#include <simgrid/s4u/Link.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace memwall::sim::parallel {

namespace sg4 = simgrid::s4u;

namespace {

// Collects the planes' links as the flows are matched to rank 0's; `ok` falls at the first mismatch.
class PlaneMatcher {
public:
  explicit PlaneMatcher(size_t planes) : to_zero_(planes), from_zero_(planes) {}

  // Route `r` of plane `i` corresponds to route `zero` of plane 0.
  void match(size_t i, const RouteFigures& r, const RouteFigures& zero) {
    if (!ok)
      return;
    if (r.links.size() != zero.links.size() || r.latency_s != zero.latency_s ||
        r.bottleneck_bytes_per_s != zero.bottleneck_bytes_per_s) {
      ok = false;
      return;
    }
    for (size_t k = 0; k < r.links.size() && ok; ++k) {
      own(r.links[k], i);
      own(zero.links[k], 0);
      if (i == 0)
        continue;
      const auto [there, added] = to_zero_[i].emplace(r.links[k], zero.links[k]);
      const auto [back, back_added] = from_zero_[i].emplace(zero.links[k], r.links[k]);
      if (there->second != zero.links[k] || back->second != r.links[k])
        ok = false; // not one-to-one
      else if (added && !alike(r.links[k], zero.links[k]))
        ok = false;
    }
  }

  bool ok = true;

private:
  void own(const std::string& link, size_t plane) {
    const auto [it, added] = owner_.emplace(link, plane);
    if (!added && it->second != plane)
      ok = false; // two planes cross this link: their flows meet
  }
  static bool alike(const std::string& a, const std::string& b) {
    const sg4::Link* la = sg4::Link::by_name_or_null(a);
    const sg4::Link* lb = sg4::Link::by_name_or_null(b);
    return la && lb && la->get_bandwidth() == lb->get_bandwidth() && la->get_latency() == lb->get_latency() &&
           la->get_sharing_policy() == lb->get_sharing_policy();
  }

  std::unordered_map<std::string, size_t> owner_;
  std::vector<std::unordered_map<std::string, std::string>> to_zero_, from_zero_;
};

// A group's ring flows by sending member, each plane's in the order they are posted.
bool match_rings(const StageJob& job, size_t g, const std::vector<StageJob::RingFlow>& flows,
                 PlaneMatcher& m) {
  const std::vector<long long>& members = job.members[g];
  std::vector<std::vector<const StageJob::RingFlow*>> by_plane(members.size());
  for (const StageJob::RingFlow& f : flows) {
    const std::vector<long long>& receivers = job.members[size_t(f.to_group)];
    if (f.from >= receivers.size() || receivers[f.from] != f.to)
      return false; // a flow between TP ranks
    by_plane[f.from].push_back(&f);
  }
  for (size_t i = 0; i < by_plane.size(); ++i) {
    if (by_plane[i].size() != by_plane[0].size())
      return false;
    for (size_t k = 0; k < by_plane[i].size(); ++k) {
      const StageJob::RingFlow &f = *by_plane[i][k], &z = *by_plane[0][k];
      if (f.share != z.share || f.to_group != z.to_group)
        return false;
      m.match(i, f.route, z.route);
    }
  }
  return m.ok;
}

bool planes_mirror(const StageJob& job) {
  const size_t t = size_t(job.scenario.layout.tensor);
  if (t < 2 || job.faults || !job.scenario.link_events.empty() || !job.ep_blocks.empty())
    return false;
  PlaneMatcher m(t);
  for (size_t g = 0; g < size_t(job.groups); ++g) {
    if (job.members[g].size() != t || !job.tp_ring_private[g])
      return false;
    for (const auto* routes : {&job.forward_routes[g], &job.backward_routes[g], &job.cp_routes[g]}) {
      if (routes->empty())
        continue;
      if (routes->size() != t)
        return false;
      for (size_t i = 0; i < t; ++i)
        m.match(i, (*routes)[i], (*routes)[0]);
    }
    for (const auto* flows : {&job.ring_flows[g], &job.replica_ring_flows[g], &job.expert_ring_flows[g]})
      if (!match_rings(job, g, *flows, m))
        return false;
    if (!m.ok)
      return false;
  }
  return m.ok;
}

} // namespace

bool mirror_planes(StageJob& job, bool allowed) {
  job.mirror_planes = allowed && planes_mirror(job);
  return job.mirror_planes;
}

} // namespace memwall::sim::parallel
