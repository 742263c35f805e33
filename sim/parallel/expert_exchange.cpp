#include "expert_exchange.hpp"

#include "stage_setup.hpp"

#include "collectives/all_to_all.hpp"
#include "sim/engine/private_rounds.hpp"

#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>

namespace memwall::sim::parallel {

namespace sg4 = simgrid::s4u;

namespace {

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

// One block: its groups' slots (in block order) and, per TP rank, the communicator's ranks.
struct BlockRanks {
  long long stage = 0;
  std::vector<long long> slots;
  std::vector<std::vector<long long>> communicators;
};

// Blocks of consecutive slots (replica x c + context rank) of a stage: Megatron-Core's expert groups.
// With expert_tensor_parallel = TP, E slots, EP folded over CP x DP (context innermost), one
// communicator per TP rank; with expert_tensor_parallel = 1, E / t slots and one communicator of all
// their GPUs (slot by slot, TP ranks innermost), EP folded over TP x CP x DP.
std::vector<BlockRanks> blocks_of(const model::ParallelLayout& l) {
  std::vector<BlockRanks> blocks;
  const long long e = l.expert_slots(), slots = l.data * l.context;
  const bool folded_over_tp = l.expert_tensor_degree() != l.tensor;
  for (long long stage = 0; stage < l.pipeline; ++stage)
    for (long long first = 0; first < slots; first += e) {
      BlockRanks b;
      b.stage = stage;
      b.communicators.resize(folded_over_tp ? 1 : size_t(l.tensor));
      for (long long slot = first; slot < first + e; ++slot) {
        b.slots.push_back(slot);
        const std::vector<long long> members = group_members(l, stage, slot);
        for (size_t i = 0; i < members.size(); ++i)
          b.communicators[folded_over_tp ? 0 : i].push_back(members[i]);
      }
      blocks.push_back(std::move(b));
    }
  return blocks;
}

// A block's legs and stand-ins (empty when some communicator's cannot be built), in units.
struct BlockFlows {
  std::vector<collectives::Flow> legs, stand_ins;
};

BlockFlows block_flows(const BlockRanks& b, const std::vector<collectives::GpuPlace>& places, bool pxn) {
  BlockFlows f;
  bool whole = true;
  for (const std::vector<long long>& ranks : b.communicators) {
    std::vector<collectives::Flow> legs = collectives::all_to_all_flows(ranks, places, pxn, 1.0);
    std::vector<collectives::Flow> stand_ins = collectives::all_to_all_stand_ins(legs, ranks, places);
    whole = whole && !stand_ins.empty();
    f.legs.insert(f.legs.end(), legs.begin(), legs.end());
    f.stand_ins.insert(f.stand_ins.end(), stand_ins.begin(), stand_ins.end());
  }
  if (!whole)
    f.stand_ins.clear();
  return f;
}

// Whether the stand-ins load every link as the legs do and, alone, take their time at each of
// `unit_bytes` (a message's bytes for each all-to-all size a layer pass posts).
bool stand_ins_match(const std::vector<StageJob::EpFlow>& legs, const std::vector<StageJob::EpFlow>& stand_ins,
                     const std::vector<double>& unit_bytes) {
  std::unordered_map<std::string, size_t> index;
  std::vector<double> bandwidth;
  std::vector<double> leg_units, stand_in_units; // per link
  auto load = [&](const std::vector<StageJob::EpFlow>& flows, std::vector<double>& units) {
    for (const StageJob::EpFlow& f : flows)
      for (const std::string& name : f.route.links) {
        auto [it, fresh] = index.try_emplace(name, bandwidth.size());
        if (fresh)
          bandwidth.push_back(sg4::Link::by_name(name)->get_bandwidth());
        units.resize(bandwidth.size(), 0.0);
        units[it->second] += f.units;
      }
  };
  load(legs, leg_units);
  load(stand_ins, stand_in_units);
  leg_units.resize(bandwidth.size(), 0.0);
  stand_in_units.resize(bandwidth.size(), 0.0);
  for (size_t k = 0; k < bandwidth.size(); ++k)
    if (!close(leg_units[k], stand_in_units[k]))
      return false;
  auto timed = [&](const std::vector<StageJob::EpFlow>& flows, double bytes_per_unit) {
    std::vector<TimedFlow> out;
    for (const StageJob::EpFlow& f : flows) {
      TimedFlow t{{}, std::ceil(f.units * bytes_per_unit), f.route.latency_s};
      for (const std::string& name : f.route.links)
        t.links.push_back(index.at(name));
      out.push_back(std::move(t));
    }
    return out;
  };
  for (double b : unit_bytes) {
    const double t_legs = isolated_time_s(timed(legs, b), bandwidth);
    const double t_stand_ins = isolated_time_s(timed(stand_ins, b), bandwidth);
    if (t_legs < 0 || t_stand_ins < 0 || !close(t_legs, t_stand_ins))
      return false;
  }
  return true;
}

} // namespace

std::vector<std::vector<std::vector<long long>>> expert_data_rings(const model::ParallelLayout& l) {
  std::vector<std::vector<BlockRanks>> by_stage(size_t(l.pipeline));
  if (l.expert > 1)
    for (BlockRanks& b : blocks_of(l))
      by_stage[size_t(b.stage)].push_back(std::move(b));
  std::vector<std::vector<std::vector<long long>>> rings(size_t(l.pipeline));
  for (size_t stage = 0; stage < by_stage.size(); ++stage) {
    const std::vector<BlockRanks>& mine = by_stage[stage];
    if (mine.size() < 2)
      continue;
    for (size_t c = 0; c < mine.front().communicators.size(); ++c)
      for (size_t k = 0; k < mine.front().communicators[c].size(); ++k) {
        rings[stage].emplace_back();
        for (const BlockRanks& b : mine)
          rings[stage].back().push_back(b.communicators[c][k]);
      }
  }
  return rings;
}

double isolated_time_s(const std::vector<TimedFlow>& flows, const std::vector<double>& bandwidth_bytes_per_s) {
  // Max-min sharing by progressive filling: the link whose fair share is least fixes its flows' rate.
  const size_t n_links = bandwidth_bytes_per_s.size();
  std::vector<double> capacity = bandwidth_bytes_per_s;
  std::vector<long long> unfixed(n_links, 0);
  std::vector<std::vector<size_t>> on_link(n_links);
  for (size_t f = 0; f < flows.size(); ++f)
    for (size_t k : flows[f].links) {
      ++unfixed[k];
      on_link[k].push_back(f);
    }
  std::vector<double> rate(flows.size(), -1.0);
  size_t left = 0;
  for (const TimedFlow& f : flows)
    left += f.links.empty() ? 0 : 1;
  while (left > 0) {
    size_t tightest = n_links;
    double share = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < n_links; ++k)
      if (unfixed[k] > 0 && capacity[k] / double(unfixed[k]) < share) {
        share = capacity[k] / double(unfixed[k]);
        tightest = k;
      }
    for (size_t f : on_link[tightest]) {
      if (rate[f] >= 0)
        continue;
      rate[f] = share;
      --left;
      for (size_t k : flows[f].links) {
        capacity[k] -= share;
        --unfixed[k];
      }
    }
  }
  // Sharing components (flows joined by a link): one latency and one duration in each.
  std::vector<size_t> parent(flows.size());
  std::iota(parent.begin(), parent.end(), size_t(0));
  auto find = [&](size_t f) {
    while (parent[f] != f)
      f = parent[f] = parent[parent[f]];
    return f;
  };
  for (const std::vector<size_t>& users : on_link)
    for (size_t i = 1; i < users.size(); ++i)
      parent[find(users[i])] = find(users[0]);
  std::map<size_t, std::pair<double, double>> component; // root -> (latency, duration)
  double t_s = 0;
  for (size_t f = 0; f < flows.size(); ++f) {
    if (flows[f].links.empty())
      return -1.0; // a GPU to itself: not a flow of an all-to-all
    const double duration_s = flows[f].bytes / rate[f];
    auto [it, fresh] = component.try_emplace(find(f), flows[f].latency_s, duration_s);
    if (!fresh && (!close(it->second.first, flows[f].latency_s) || !close(it->second.second, duration_s)))
      return -1.0;
    t_s = std::max(t_s, flows[f].latency_s + duration_s);
  }
  return t_s;
}

std::vector<std::pair<long long, long long>> expert_exchange_pairs(const Scenario& s,
                                                                   const std::vector<collectives::GpuPlace>& places) {
  std::vector<std::pair<long long, long long>> pairs;
  if (s.layout.expert < 2)
    return pairs;
  const bool pxn = collectives::pxn_applies(s.fabric);
  for (const BlockRanks& b : blocks_of(s.layout)) {
    const BlockFlows f = block_flows(b, places, pxn);
    for (const auto* flows : {&f.legs, &f.stand_ins})
      for (const collectives::Flow& flow : *flows)
        pairs.emplace_back(flow.src, flow.dst);
  }
  return pairs;
}

void plan_expert_exchange(StageJob& job, const std::vector<collectives::GpuPlace>& places,
                          const std::function<RouteFigures(long long, long long)>& route,
                          const std::vector<double>& counts) {
  const Scenario& s = job.scenario;
  const model::ParallelLayout& l = s.layout;
  const size_t groups = size_t(job.groups);
  job.ep_block.assign(groups, -1);
  job.ep_rank.assign(groups, 0);
  job.ep_posts.assign(groups, {});
  job.ep_totals.assign(groups, std::vector<StageJob::EpTotals>(size_t(l.tensor)));
  job.ep_wake.assign(groups, nullptr);
  if (l.expert < 2)
    return;
  const model::ArchitectureSpec arch = architecture_of(s);
  const double tokens = s.tokens_per_microbatch / double(l.context); // on one GPU of a context group
  // The tokens dispatched: all of them dropless, fewer where a capacity drops some, more where it pads.
  job.ep_message_bytes = tokens / double(l.tensor) * double(arch.moe.top_k) * double(s.shape.hidden) *
                         kActivationBytesPerValue * model::expert_load(arch.moe, l.expert).dispatched;
  std::vector<double> unit_bytes; // a message's bytes at each all-to-all size posted
  for (double count : counts)
    unit_bytes.push_back(count * job.ep_message_bytes / double(l.expert));
  std::unordered_map<long long, std::pair<size_t, size_t>> member_of; // rank -> (group, TP rank)
  for (size_t g = 0; g < groups; ++g)
    for (size_t i = 0; i < job.members[g].size(); ++i)
      member_of[job.members[g][i]] = {g, i};
  const bool pxn = collectives::pxn_applies(s.fabric);
  for (const BlockRanks& b : blocks_of(l)) {
    StageJob::EpBlock block;
    for (size_t j = 0; j < b.slots.size(); ++j) {
      const long long g = job.group_of(b.stage, b.slots[j]);
      block.groups.push_back(g);
      job.ep_block[size_t(g)] = static_cast<long long>(job.ep_blocks.size());
      job.ep_rank[size_t(g)] = static_cast<long long>(j);
      job.ep_wake[size_t(g)] = sg4::Semaphore::create(0);
    }
    const BlockFlows f = block_flows(b, places, pxn);
    for (const collectives::Flow& leg : f.legs) {
      block.legs.push_back({leg.src, leg.dst, leg.bytes, route(leg.src, leg.dst)});
      const StageJob::EpFlow& e = block.legs.back();
      block.latency_s = std::max(block.latency_s, e.route.latency_s);
      const auto [from_group, from] = member_of.at(leg.src);
      const auto [to_group, to] = member_of.at(leg.dst);
      StageJob::EpTotals& sender = job.ep_totals[from_group][from];
      sender.sent_units += leg.bytes;
      sender.joules_per_unit += leg.bytes * e.route.j_per_byte;
      sender.legs += 1;
      job.ep_totals[to_group][to].received_units += leg.bytes;
    }
    std::vector<StageJob::EpFlow> stand_ins;
    if (!simulate_every_message() && job.scenario.link_events.empty()) // stand-ins hold only on fixed links
      for (const collectives::Flow& f_in : f.stand_ins)
        stand_ins.push_back({f_in.src, f_in.dst, f_in.bytes, route(f_in.src, f_in.dst)});
    const bool post_stand_ins = !stand_ins.empty() && stand_ins_match(block.legs, stand_ins, unit_bytes);
    for (const StageJob::EpFlow& posted : post_stand_ins ? stand_ins : block.legs)
      job.ep_posts[member_of.at(posted.src).first].push_back(posted);
    job.ep_blocks.push_back(std::move(block));
  }
}

} // namespace memwall::sim::parallel
