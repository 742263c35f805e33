#include "stage_setup.hpp"

#include "dp_sync.hpp"
#include "expert_exchange.hpp"
#include "stage_actor.hpp"

#include "collectives/channels.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <algorithm>
#include <unordered_map>

namespace memwall::sim::parallel {

namespace sg4 = simgrid::s4u;

std::vector<long long> group_members(const model::ParallelLayout& layout, long long stage, long long slot) {
  std::vector<long long> ranks;
  for (long long i = 0; i < layout.tensor; ++i)
    ranks.push_back(model::rank_of(layout, {i, slot % layout.context, slot / layout.context, stage}));
  return ranks;
}

namespace {

// The slot of the same context rank in replica `replica`; the next context rank of the same replica.
long long slot_of(const model::ParallelLayout& l, long long replica, long long context) {
  return replica * l.context + context;
}
long long next_context_slot(const model::ParallelLayout& l, long long slot) {
  return slot_of(l, slot / l.context, (slot % l.context + 1) % l.context);
}

// Per TP rank i, the data-parallel rings over the stage's slots (member i of each, in slot order)
// as NCCL's channels run them: one over every slot; with HSDP one per shard group (consecutive
// slots: training.shard_group replicas x every context rank) or, `across_replicas`, one per shard
// position over the shard groups (slots k, k + S, ... for a shard group of S slots).
std::vector<std::vector<collectives::RingFlow>> data_rings(const Scenario& s, long long stage, size_t i,
                                                           const std::vector<collectives::GpuPlace>& places,
                                                           bool across_replicas = false) {
  const model::ParallelLayout& l = s.layout;
  const long long slots = l.data * l.context;
  const long long shard = s.training.shard_degree(l.data, l.context);
  const long long rings = across_replicas ? shard : slots / shard, size = across_replicas ? slots / shard : shard;
  std::vector<std::vector<collectives::RingFlow>> out;
  for (long long r = 0; r < rings && size > 1; ++r) {
    std::vector<long long> order;
    for (long long k = 0; k < size; ++k)
      order.push_back(group_members(l, stage, across_replicas ? r + k * shard : r * shard + k)[i]);
    out.push_back(collectives::channel_ring_flows(order, places, s.channels));
  }
  return out;
}

} // namespace

std::vector<std::pair<long long, long long>> parallel_pairs(const Scenario& s, const std::vector<collectives::GpuPlace>& places) {
  const model::ParallelLayout& l = s.layout;
  std::vector<std::pair<long long, long long>> pairs;
  const long long slots = l.data * l.context;
  // The data-parallel rings' destinations by sender, listed where a sender's pairs are (the order
  // pairs are requested in picks among equal-cost paths: one channel keeps the single ring's order).
  std::unordered_map<long long, std::vector<long long>> ring_destinations;
  if (slots > 1 && s.grouped_layout()) // else the chosen collective's pairs (simulation.cpp)
    for (long long stage = 0; stage < l.pipeline; ++stage)
      for (size_t i = 0; i < size_t(l.tensor); ++i)
        for (bool across : {false, true})
          for (const auto& ring : data_rings(s, stage, i, places, across))
            for (const collectives::RingFlow& f : ring)
              ring_destinations[f.src].push_back(f.dst);
  for (long long stage = 0; stage < l.pipeline; ++stage)
    for (long long slot = 0; slot < slots; ++slot) {
      const auto mine = group_members(l, stage, slot);
      const auto next_stage = group_members(l, (stage + 1) % l.pipeline, slot);
      const auto next_context = group_members(l, stage, next_context_slot(l, slot));
      if (l.tensor > 1)
        for (const collectives::RingFlow& f : collectives::channel_ring_flows(mine, places, s.channels))
          pairs.emplace_back(f.src, f.dst);
      for (size_t i = 0; i < mine.size(); ++i) {
        if (l.pipeline > 1) {
          pairs.emplace_back(mine[i], next_stage[i]);
          pairs.emplace_back(next_stage[i], mine[i]);
        }
        if (slots > 1)
          for (long long dst : ring_destinations[mine[i]])
            pairs.emplace_back(mine[i], dst);
        if (l.context > 1)
          pairs.emplace_back(mine[i], next_context[i]);
      }
    }
  for (const auto& stage_rings : expert_data_rings(l)) // the expert-data-parallel rings
    for (const std::vector<long long>& ring : stage_rings)
      for (const collectives::RingFlow& f : collectives::channel_ring_flows(ring, places, s.channels))
        pairs.emplace_back(f.src, f.dst);
  const auto expert = expert_exchange_pairs(s, places);
  pairs.insert(pairs.end(), expert.begin(), expert.end());
  // By destination: the route finder searches from each destination once (it keeps a few hundred
  // searches), instead of once per pair kind when a destination's pairs lie far apart.
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

std::unique_ptr<StageJob> plan_stage_job(const Scenario& s, const StepWork& work, const Platform& platform,
                                         RunRecorder& recorder, const std::vector<collectives::GpuPlace>& places,
                                         const CollectiveRunner* data_collective, double data_collective_bytes) {
  const model::ParallelLayout& l = s.layout;
  auto job = std::make_unique<StageJob>(s, work, platform, recorder);
  const long long slots = job->slots();
  job->groups = l.pipeline * slots;
  for (long long stage = 0; stage < l.pipeline; ++stage)
    for (long long slot = 0; slot < slots; ++slot) {
      job->members.push_back(group_members(l, stage, slot));
      job->group_stage.push_back(stage);
      job->group_replica.push_back(slot);
    }
  const auto kind = l.gpipe ? pipeline::ScheduleKind::GPipe : pipeline::ScheduleKind::OneFOneB;
  const double bytes_per_param = s.traffic.b_ar_bytes_per_param / 2.0 * s.training.gradient_traffic_scale();
  // The distributed optimizer shards over data x context (context ranks hold the same weights).
  const long long updaters =
      s.training.sharding == model::Sharding::None ? 1 : s.training.shard_degree(l.data, l.context);
  const std::vector<std::vector<std::vector<long long>>> expert_rings = expert_data_rings(l); // per stage
  for (long long stage = 0; stage < l.pipeline; ++stage) {
    job->orders.push_back(pipeline::stage_order(kind, l.pipeline, stage, s.microbatches, l.virtual_stages));
    // A stage's parameters: its chunks' layers, the embeddings on the first stage, an untied LM head
    // on the last. (A tied head's copy on the last stage and its embedding all-reduce between the
    // first and last stages are not modelled.)
    double params = 0, experts = 0; // experts: the GPU's routed experts, of params
    for (long long chunk = 0; chunk < l.virtual_stages; ++chunk) {
      const model::LayerRange range = model::chunk_layers(l, stage, chunk);
      for (long long layer = range.first; layer < range.last; ++layer) { // EP splits the routed experts
        const GpuLayerParams p = gpu_layer_params(work, l, layer);
        params += p.params;
        experts += p.experts;
      }
    }
    if (stage == 0)
      params += work.embedding_params;
    if (stage == l.pipeline - 1)
      params += work.head.params;
    // Megatron-Core reduces (and its distributed optimizer shards) dense gradients over the replicas
    // (data x context), a routed expert's over the GPUs holding the same experts (expt_dp_group).
    const auto& rings = expert_rings[size_t(stage)];
    const long long expert_dp = rings.empty() ? 1 : static_cast<long long>(rings.front().size());
    job->expert_ring_size.push_back(expert_dp);
    job->stage_gradient_bytes.push_back(bytes_per_param * (params - experts));
    job->stage_expert_gradient_bytes.push_back(expert_dp > 1 ? bytes_per_param * experts : 0.0);
    const double sharded_experts = updaters == 1 ? experts : experts * double(updaters) / double(expert_dp);
    job->stage_optimizer.push_back(optimizer_phase(s, params - experts + sharded_experts, updaters));
  }
  const double tokens = s.tokens_per_microbatch / double(l.context); // on one GPU of a context group
  const double activations = tokens * double(s.shape.hidden) * kActivationBytesPerValue;
  job->tp_message_bytes = activations;
  job->pp_message_bytes = activations / double(l.tensor);
  const size_t groups = size_t(job->groups);
  job->forward_in.resize(groups);
  job->backward_in.resize(groups);
  job->ring_ready.resize(groups);
  job->ring_received.resize(groups);
  job->forward_sends.resize(groups);
  job->backward_sends.resize(groups);
  job->tp_flows.resize(groups);
  job->ring_flows.resize(groups);
  job->ring_to.resize(groups);
  job->ring_from.resize(groups);
  job->tp_latency_s.assign(groups, 0.0);
  job->cp_routes.resize(groups);
  job->cp_latency_s.assign(groups, 0.0);
  job->cp_ready.resize(groups);
  job->cp_received.resize(groups);
  if (l.context > 1) { // a layer's keys and values for this GPU's tokens (heads split over TP)
    const model::ArchitectureSpec arch = architecture_of(s);
    job->kv_bytes = tokens * 2.0 * model::kv_width(arch) * kActivationBytesPerValue / double(l.tensor);
  }
  job->ring_latency_s.assign(groups, 0.0);
  job->forward_routes.resize(groups);
  job->backward_routes.resize(groups);
  auto route = [&](long long a, long long b) {
    return route_figures(platform, recorder, platform.gpus[size_t(a)], platform.gpus[size_t(b)]);
  };
  std::unordered_map<std::string, int> link_uses; // over every route of the job
  auto count = [&](const std::vector<RouteFigures>& routes) {
    for (const RouteFigures& r : routes)
      for (const std::string& link : r.links)
        link_uses[link] += 1;
  };
  for (size_t g = 0; g < groups; ++g) {
    const auto& mine = job->members[g];
    const long long stage = job->group_stage[g], replica = job->group_replica[g];
    const auto& next_context = job->members[size_t(job->group_of(stage, next_context_slot(l, replica)))];
    const auto& next_stage = job->members[size_t(job->group_of((stage + 1) % l.pipeline, replica))];
    const auto& previous_stage = job->members[size_t(job->group_of((stage + l.pipeline - 1) % l.pipeline, replica))];
    if (l.tensor > 1) {
      std::vector<RouteFigures> tp_routes;
      for (const collectives::RingFlow& f : collectives::channel_ring_flows(mine, places, s.channels)) {
        const size_t from = size_t(std::find(mine.begin(), mine.end(), f.src) - mine.begin());
        job->tp_flows[g].push_back({from, f.dst, f.share, route(f.src, f.dst)});
        job->tp_latency_s[g] = std::max(job->tp_latency_s[g], job->tp_flows[g].back().route.latency_s);
        tp_routes.push_back(job->tp_flows[g].back().route);
      }
      count(tp_routes);
    }
    for (size_t i = 0; i < mine.size(); ++i) {
      if (l.context > 1) {
        job->cp_routes[g].push_back(route(mine[i], next_context[i]));
        job->cp_latency_s[g] = std::max(job->cp_latency_s[g], job->cp_routes[g].back().latency_s);
      }
      if (l.pipeline > 1) {
        job->forward_routes[g].push_back(route(mine[i], next_stage[i]));
        job->backward_routes[g].push_back(route(mine[i], previous_stage[i]));
      }
    }
    for (const auto* routes :
         {&job->forward_routes[g], &job->backward_routes[g], &job->cp_routes[g]})
      count(*routes);
  }
  // A ring's flows, kept by their sending group with the ring's handshakes (the groups each sends to
  // and receives from) and the longest latency; its routes counted.
  std::unordered_map<long long, std::pair<long long, size_t>> member_of; // rank -> (group, TP rank)
  for (size_t g = 0; g < groups; ++g)
    for (size_t i = 0; i < job->members[g].size(); ++i)
      member_of[job->members[g][i]] = {static_cast<long long>(g), i};
  auto add_ring = [&](const std::vector<collectives::RingFlow>& ring, std::vector<std::vector<StageJob::RingFlow>>& flows,
                      std::vector<double>& latency_s, std::vector<std::vector<long long>>& ring_to,
                      std::vector<std::vector<long long>>& ring_from) {
    std::vector<RouteFigures> routes;
    for (const collectives::RingFlow& f : ring) {
      const auto [from, i] = member_of.at(f.src);
      const long long to = member_of.at(f.dst).first;
      flows[size_t(from)].push_back({i, to, f.dst, f.share, route(f.src, f.dst)});
      latency_s[size_t(from)] = std::max(latency_s[size_t(from)], flows[size_t(from)].back().route.latency_s);
      routes.push_back(flows[size_t(from)].back().route);
      for (auto [list, group] : {std::pair{&ring_to[size_t(from)], to}, std::pair{&ring_from[size_t(to)], from}})
        if (std::find(list->begin(), list->end(), group) == list->end())
          list->push_back(group);
    }
    count(routes);
  };
  // Data-parallel rings: per stage and TP rank, over the slots. Expert-data-parallel rings: a routed
  // expert's gradients over the GPUs holding the same experts.
  // HSDP: the dense rings inside the shard groups, the replica rings across them (their own handshakes).
  job->dense_ring_size = s.training.shard_degree(l.data, l.context);
  job->replica_ring_size = slots / job->dense_ring_size;
  job->replica_ring_flows.resize(groups);
  job->replica_ring_latency_s.assign(groups, 0.0);
  job->replica_to.resize(groups);
  job->replica_from.resize(groups);
  job->data_collective = data_collective;
  job->data_collective_bytes = data_collective_bytes;
  if (slots > 1 && !data_collective)
    for (long long stage = 0; stage < l.pipeline; ++stage)
      for (size_t i = 0; i < size_t(l.tensor); ++i) {
        for (const auto& ring : data_rings(s, stage, i, places))
          add_ring(ring, job->ring_flows, job->ring_latency_s, job->ring_to, job->ring_from);
        for (const auto& ring : data_rings(s, stage, i, places, true))
          add_ring(ring, job->replica_ring_flows, job->replica_ring_latency_s, job->replica_to, job->replica_from);
      }
  job->expert_ring_flows.resize(groups);
  job->expert_ring_latency_s.assign(groups, 0.0);
  for (const auto& stage_rings : expert_rings)
    for (const std::vector<long long>& ring : stage_rings)
      add_ring(collectives::channel_ring_flows(ring, places, s.channels), job->expert_ring_flows,
               job->expert_ring_latency_s, job->ring_to, job->ring_from);
  // Expert-parallel blocks (expert_exchange.hpp): a layer pass merges 2 all-to-alls (forward) or 2
  // or 4 (backward, with the recomputed forward's).
  plan_expert_exchange(*job, places, route, {2.0, 4.0});
  for (const StageJob::EpBlock& block : job->ep_blocks) {
    std::vector<RouteFigures> routes;
    for (const StageJob::EpFlow& f : block.legs)
      routes.push_back(f.route);
    count(routes);
  }
  if (l.pipeline == 1 && s.training.sharding == model::Sharding::Zero3) { // FSDP's units (dp_sync.hpp)
    for (long long layer = 0; layer < s.shape.layers; ++layer)
      job->fsdp_unit_bytes.push_back(bytes_per_param * gpu_layer_params(work, l, layer).params);
    job->fsdp_unit_bytes.front() += bytes_per_param * (work.embedding_params + work.head.params);
  }
  if (s.training.overlap_bucketed && slots > 1) { // overlap_grad_reduce, or FSDP's prefetch (dp_sync.hpp)
    if (!job->fsdp())
      plan_gradient_buckets(*job, bytes_per_param);
    job->dp_streams = std::vector<StageJob::DpStream>(groups);
  }
  job->queued_until_s.assign(groups, -1.0);
  job->tp_ring_private.assign(groups, false);
  for (size_t g = 0; g < groups; ++g) {
    const auto& ring = job->tp_flows[g];
    bool alike = !ring.empty() && ring.size() == job->members[g].size(); // one flow per member, share 1
    for (const StageJob::TpFlow& f : ring) {
      const RouteFigures& r = f.route;
      alike = alike && f.share == 1.0 && r.latency_s == ring.front().route.latency_s &&
              r.bottleneck_bytes_per_s == ring.front().route.bottleneck_bytes_per_s;
      for (const std::string& link : r.links)
        alike = alike && link_uses[link] == 1;
    }
    job->tp_ring_private[g] = alike && s.link_events.empty(); // a link event breaks "alike" mid-run
  }
  return job;
}

void create_stage_actors(StageJob& job) {
  for (long long g = 0; g < job.groups; ++g) {
    // The group moves at its slowest GPU's pace (stragglers).
    sg4::Host* host = nullptr;
    for (long long rank : job.members[size_t(g)]) {
      sg4::Host* h = job.platform.gpus[size_t(rank)];
      if (!host || h->get_speed() < host->get_speed())
        host = h;
    }
    const std::string name = "stage" + std::to_string(job.group_stage[size_t(g)]) + "-dp" +
                             std::to_string(job.group_replica[size_t(g)]);
    sg4::Actor::create(name, host, StageActor(job, g));
    if (job.dp_overlap() && !job.timed_streams()) { // a timed stream needs no actor
      job.dp_streams[size_t(g)].queued = sg4::Semaphore::create(0);
      job.dp_streams[size_t(g)].done = sg4::Semaphore::create(0);
      sg4::Actor::create(name + "-dp-stream", host, DpStreamActor(job, g));
    }
    if (job.scenario.layout.pipeline > 1) {
      job.forward_sends[size_t(g)].queued = sg4::Semaphore::create(0);
      job.backward_sends[size_t(g)].queued = sg4::Semaphore::create(0);
      sg4::Actor::create(name + "-send-fwd", host, SendActor(job, g, true));
      sg4::Actor::create(name + "-send-bwd", host, SendActor(job, g, false));
    }
  }
}

} // namespace memwall::sim::parallel
