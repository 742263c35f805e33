// A stage actor's expert parallelism: an MoE layer's routed work under the experts' load, the
// block's gates, and its all-to-alls, whole or in two halves around the layer's compute
// (moe_a2a_overlap). The blocks, their flows and message sizes are planned in expert_exchange.cpp.
#include "stage_actor.hpp"

#include "flights.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>

namespace memwall::sim::parallel {

namespace sg4 = simgrid::s4u;

PhaseCost StageActor::with_expert_load(const LayerWork& w, const PhaseCost& phase) const {
  const long long e = job_.scenario.layout.expert;
  if (!w.moe)
    return phase;
  // The hot expert's GPU does `hot` times the mean routed work, the others share what is left; a
  // capacity clips (or pads) each rank's (model::expert_load).
  const model::ExpertLoad loads = model::expert_load(job_.scenario.arch.moe, e);
  const double load = e > 1 && job_.ep_rank[size_t(group_)] == 0 ? loads.hot : loads.other;
  if (load == 1)
    return phase;
  const double scale = 1.0 + (load - 1.0) * w.routed_expert_share;
  PhaseCost p = phase;
  p.flops *= scale;
  p.hbm_bytes *= scale;
  p.roofline_flops *= scale;
  return p;
}

void StageActor::expert_gate(long long key) const {
  StageJob::EpBlock& block = job_.ep_blocks[size_t(job_.ep_block[size_t(group_)])];
  StageJob::EpGate& gate = block.gates[key];
  if (++gate.arrived < static_cast<int>(block.groups.size())) {
    gate.waiting.push_back(group_);
    job_.ep_wake[size_t(group_)]->acquire();
    return;
  }
  for (long long g : gate.waiting) // the last to arrive opens the gate
    job_.ep_wake[size_t(g)]->release();
  block.gates.erase(key);
}

void StageActor::expert_all_to_all(const PhaseContext& where, double count) const {
  ExpertExchange x = expert_all_to_all_start(count);
  expert_all_to_all_finish(x, where, false);
}

StageActor::ExpertExchange StageActor::expert_all_to_all_start(double count) const {
  ExpertExchange x;
  if (job_.ep_block[size_t(group_)] < 0)
    return x;
  job_.settle(group_);
  x.key = all_to_alls_++;
  x.count = count;
  x.t_start_s = sg4::Engine::get_clock();
  expert_gate(2 * x.key); // every group of the block present before the exchange
  x.t_all_in_s = sg4::Engine::get_clock(); // before: waiting for the block's last member
  // A message's bytes: a GPU's tokens for one peer, the `count` all-to-alls of the pass as one.
  x.unit_bytes = count * job_.ep_message_bytes / double(job_.scenario.layout.expert);
  for (const StageJob::EpFlow& f : job_.ep_posts[size_t(group_)])
    post(job_, x.flights, f.src, f.dst, f.units * x.unit_bytes);
  return x;
}

void StageActor::expert_all_to_all_finish(ExpertExchange& x, const PhaseContext& where, bool overlapped) const {
  if (x.key < 0)
    return;
  job_.settle(group_);
  const StageJob::EpBlock& block = job_.ep_blocks[size_t(job_.ep_block[size_t(group_)])];
  const long long key = x.key;
  const double t_start = x.t_start_s, t_all_in = x.t_all_in_s, unit_bytes = x.unit_bytes;
  const double t_wait = sg4::Engine::get_clock(); // after the compute it overlapped, if any
  await(job_, x.flights, job_.members[size_t(group_)].front());
  expert_gate(2 * key + 1); // every flow of the block in
  // The `count` all-to-alls went as one flow per pair: the others' latencies after it (with overlap
  // they run beside the compute too: only what is left after this GPU's flows is waited for).
  const double extra_s = (x.count - 1.0) * block.latency_s + x.count * job_.scenario.fabric.message_latency_s;
  double left_s = extra_s;
  if (overlapped) {
    double flows_end = t_all_in;
    for (const auto& comm : x.flights.comms)
      flows_end = std::max(flows_end, comm->get_finish_time());
    left_s = flows_end + extra_s - sg4::Engine::get_clock();
  }
  if (left_s > 0)
    sg4::this_actor::sleep_for(left_s);
  const double t_end = sg4::Engine::get_clock();
  const std::vector<long long>& members = job_.members[size_t(group_)];
  for (size_t i = 0; i < members.size(); ++i) {
    const StageJob::EpTotals& t = job_.ep_totals[size_t(group_)][i];
    // Waited for: the gate, and then all of it, or with overlap what outlasted the compute.
    if (overlapped)
      job_.recorder.record_parallel(members[i], where, trace::TracePhase::ExpertComm, t_start, t_all_in, 0.0, 0.0,
                                    0.0, 0);
    job_.recorder.record_parallel(members[i], where, trace::TracePhase::ExpertComm, overlapped ? t_wait : t_start,
                                  t_end, t.sent_units * unit_bytes, t.received_units * unit_bytes,
                                  t.joules_per_unit * unit_bytes, t.legs);
    job_.recorder.record_sync_wait(members[i], trace::TracePhase::ExpertComm, t_all_in - t_start);
  }
  if (job_.recorder.tracing() && job_.ep_rank[size_t(group_)] == 0) { // the block's legs, once
    const int64_t id = job_.recorder.collective_id(trace::TracePhase::ExpertComm, group_, key);
    for (const StageJob::EpFlow& f : block.legs)
      job_.recorder.record_message({int32_t(f.src), int32_t(f.dst), f.units * unit_bytes, t_all_in, t_end, id,
                                    trace::TracePhase::ExpertComm},
                                   f.route.links);
  }
}

} // namespace memwall::sim::parallel
