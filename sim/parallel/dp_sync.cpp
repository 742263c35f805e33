#include "dp_sync.hpp"

#include "flights.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace memwall::sim::parallel {

namespace sg4 = simgrid::s4u;

GpuLayerParams gpu_layer_params(const StepWork& work, const model::ParallelLayout& l, long long layer) {
  const double routed = work.layer(layer).routed_expert_params;
  const double mine = routed * double(l.tensor) / double(l.expert_tensor_degree()) / double(l.expert);
  return {work.layer(layer).params - routed + mine, l.expert > 1 ? mine : 0.0};
}

long long bucket_round_key(long long step, long long index, int part) {
  // The flush's rounds use 2 step + part >= 0; buckets count down from -1. A stage's step holds at
  // most a bucket per layer and chunk, far fewer than 10^7.
  return -1 - 2 * (step * 10000000LL + index) - part;
}

void plan_gradient_buckets(StageJob& job, double bytes_per_param) {
  const Scenario& s = job.scenario;
  const model::ParallelLayout& l = s.layout;
  const double bucket_bytes = s.training.bucket_bytes;
  job.buckets.assign(size_t(l.pipeline), std::vector<std::vector<StageJob::GradientBucket>>(size_t(l.virtual_stages)));
  // DDP and Megatron-Core fill buckets tensor by tensor as the backward completes each gradient: a
  // bucket that fills inside a layer goes when its last tensor's gradient exists, part way through
  // the layer's backward GEMM. A layer's tensors in backward order, as shares of its 12 d^2
  // (cumulative sums of whole counts over 12, so the last share is exactly 1).
  constexpr double kLayerD2 = 12.0;
  for (long long stage = 0; stage < l.pipeline; ++stage) {
    const bool experts_reduced = job.expert_ring_size[size_t(stage)] > 1;
    for (long long chunk = 0; chunk < l.virtual_stages; ++chunk) {
      auto& out = job.buckets[size_t(stage)][size_t(chunk)];
      const model::LayerRange range = model::chunk_layers(l, stage, chunk);
      const bool first_chunk = stage == 0 && chunk == 0, last_chunk = stage == l.pipeline - 1 && chunk == l.virtual_stages - 1;
      // Gradients complete and not yet handed over: an untied LM head's come first.
      double pending = last_chunk ? bytes_per_param * job.work.head.params : 0.0, pending_experts = 0;
      for (long long layer = range.last - 1; layer >= range.first; --layer) {
        const GpuLayerParams p = gpu_layer_params(job.work, l, layer);
        const double dense = bytes_per_param * (p.params - p.experts);
        const double experts = experts_reduced ? bytes_per_param * p.experts : 0.0;
        double handed = 0, d2_ready = 0; // share of this layer's gradients handed over; tensors done
        for (size_t t = 0; t + 1 < model::kLayerTensorsInBackwardOrder.size(); ++t) {
          d2_ready += model::kLayerTensorsInBackwardOrder[t].d2;
          const double ready = d2_ready / kLayerD2;
          const double carried = handed > 0 ? 0.0 : pending, carried_experts = handed > 0 ? 0.0 : pending_experts;
          const StageJob::GradientBucket b{layer, ready, carried + dense * (ready - handed),
                                           carried_experts + experts * (ready - handed)};
          if (b.bytes + b.expert_bytes >= bucket_bytes) {
            out.push_back(b);
            handed = ready;
          }
        }
        pending = (handed > 0 ? 0.0 : pending) + dense * (1.0 - handed);
        pending_experts = (handed > 0 ? 0.0 : pending_experts) + experts * (1.0 - handed);
        // After the layer's whole backward; the first chunk's layer 0 keeps its last tensors for the
        // last bucket, with the embeddings' gradients (complete last).
        if (pending + pending_experts >= bucket_bytes && !(first_chunk && layer == range.first)) {
          out.push_back({layer, 1.0, pending, pending_experts});
          pending = pending_experts = 0;
        }
      }
      if (first_chunk)
        pending += bytes_per_param * job.work.embedding_params;
      if (pending + pending_experts > 0)
        out.push_back({range.first, 1.0, pending, pending_experts});
    }
  }
}

namespace {

CollectivePart part_of(trace::TracePhase kind) {
  return kind == trace::TracePhase::ReduceScatter ? CollectivePart::ReduceScatter
         : kind == trace::TracePhase::AllGather   ? CollectivePart::AllGather
                                                  : CollectivePart::AllReduce;
}

// A group's flows of the dense (and expert) rings, or of HSDP's replica ring (no experts there).
const std::vector<StageJob::RingFlow>& ring_flows_of(const StageJob& job, long long group, bool across_replicas) {
  return (across_replicas ? job.replica_ring_flows : job.ring_flows)[size_t(group)];
}
const std::vector<StageJob::RingFlow>& expert_flows_of(const StageJob& job, long long group, bool across_replicas) {
  static const std::vector<StageJob::RingFlow> none;
  return across_replicas ? none : job.expert_ring_flows[size_t(group)];
}

} // namespace

bool run_data_collective(StageJob& job, long long group, long long step, trace::TracePhase kind,
                         double bytes_per_gpu, long long sequence, bool overlapped) {
  if (!job.data_collective)
    return false;
  if (bytes_per_gpu > 0)
    job.data_collective->run(job.members[size_t(group)].front(), step, part_of(kind),
                             bytes_per_gpu / job.data_collective_bytes, sequence, overlapped);
  return true;
}

RingRound run_ring_round(StageJob& job, long long group, long long key, double bytes_per_gpu,
                         double expert_bytes_per_gpu, bool across_replicas) {
  RingRound r;
  // Gradients are reduced over data x context (HSDP: inside the shard group, or across the groups).
  const long long data = across_replicas ? job.replica_ring_size : job.dense_ring_size;
  const long long stage = job.group_stage[size_t(group)];
  const long long expert_dp = across_replicas ? 1 : job.expert_ring_size[size_t(stage)]; // experts' over their holders
  if (data < 2 || (bytes_per_gpu <= 0 && expert_bytes_per_gpu <= 0))
    return r;
  r.ran = true;
  r.t_start_s = sg4::Engine::get_clock();
  // Rendezvous as a ring needs it: send once the groups sent to have arrived, finish once the
  // shares of the groups received from have come in (the next and previous replica without channels).
  const std::vector<long long>& to_groups = (across_replicas ? job.replica_to : job.ring_to)[size_t(group)];
  const std::vector<long long>& from_groups = (across_replicas ? job.replica_from : job.ring_from)[size_t(group)];
  for (long long g : from_groups)
    job.ring_ready[size_t(g)].at(key)->release();
  for (size_t k = 0; k < to_groups.size(); ++k)
    job.ring_ready[size_t(group)].at(key)->acquire();
  job.ring_ready[size_t(group)].ready.erase(key);
  r.t_all_in_s = sg4::Engine::get_clock(); // before: waiting for the replicas sent to
  const std::vector<long long>& from = job.members[size_t(group)];
  const std::vector<StageJob::RingFlow>& flows = ring_flows_of(job, group, across_replicas);
  const double latency_s = (across_replicas ? job.replica_ring_latency_s : job.ring_latency_s)[size_t(group)];
  // The ring's d - 1 steps in one flow per GPU and destination; the other steps' latencies after it.
  r.bytes = double(data - 1) * bytes_per_gpu / double(data);
  const std::vector<StageJob::RingFlow>& expert_flows = expert_flows_of(job, group, across_replicas);
  r.expert_bytes = expert_dp > 1 ? double(expert_dp - 1) * expert_bytes_per_gpu / double(expert_dp) : 0.0;
  Flights flights; // TP rank 0's flows alone where the planes mirror one another (planes.hpp)
  for (const StageJob::RingFlow& f : flows)
    if (f.from == 0 || !job.mirror_planes)
      post(job, flights, from[f.from], f.to, f.share * r.bytes);
  for (const StageJob::RingFlow& f : expert_flows)
    if (f.from == 0 || !job.mirror_planes)
      post(job, flights, from[f.from], f.to, f.share * r.expert_bytes);
  await(job, flights, from.front());
  for (long long g : to_groups)
    job.ring_received[size_t(g)].at(key)->release();
  for (size_t k = 0; k < from_groups.size(); ++k)
    job.ring_received[size_t(group)].at(key)->acquire();
  job.ring_received[size_t(group)].ready.erase(key);
  // The rings' other steps' latencies after it (the longer ring's).
  const double extra_s =
      std::max(double(data - 2) * latency_s + double(data - 1) * job.scenario.fabric.message_latency_s,
               expert_dp > 1 ? double(expert_dp - 2) * job.expert_ring_latency_s[size_t(group)] +
                                   double(expert_dp - 1) * job.scenario.fabric.message_latency_s
                             : 0.0);
  if (extra_s > 0)
    sg4::this_actor::sleep_for(extra_s);
  r.t_end_s = sg4::Engine::get_clock();
  r.joules.assign(from.size(), 0.0);
  for (const StageJob::RingFlow& f : flows)
    r.joules[f.from] += f.share * r.bytes * f.route.j_per_byte;
  for (const StageJob::RingFlow& f : expert_flows)
    r.joules[f.from] += f.share * r.expert_bytes * f.route.j_per_byte;
  return r;
}

void trace_ring_round(StageJob& job, long long group, const RingRound& r, trace::TracePhase kind, long long key,
                      bool across_replicas) {
  if (!job.recorder.tracing() || !r.ran)
    return;
  const std::vector<long long>& from = job.members[size_t(group)];
  const long long stage = job.group_stage[size_t(group)];
  const std::vector<StageJob::RingFlow>& flows = ring_flows_of(job, group, across_replicas);
  const std::vector<StageJob::RingFlow>& expert_flows = expert_flows_of(job, group, across_replicas);
  // A ring's messages carry its id: the dense ring's, then the experts'.
  for (const auto* ring : {&flows, &expert_flows})
    for (const StageJob::RingFlow& f : *ring)
      job.recorder.record_message(
          {int32_t(from[f.from]), int32_t(f.to), f.share * (ring == &flows ? r.bytes : r.expert_bytes), r.t_start_s,
           r.t_end_s, job.recorder.collective_id(kind, stage, key, f.from + (ring == &flows ? 0 : from.size())), kind},
          f.route.links);
}

void DpStreamActor::operator()() const {
  sg4::Actor::self()->daemonize(); // ends with the stage actors
  StageJob::DpStream& stream = job_.dp_streams[size_t(group_)];
  const std::vector<long long>& members = job_.members[size_t(group_)];
  while (true) {
    stream.queued->acquire();
    const StageJob::DpRequest r = stream.requests.front();
    stream.requests.pop_front();
    // An all-reduce's two ring rounds are one call of the chosen collective.
    if (run_data_collective(job_, group_, r.step, r.kind, r.bytes, r.key, true)) {
      (r.done ? r.done : stream.done)->release();
      continue;
    }
    for (int part = 0; part < r.rounds; ++part) {
      const long long key = r.key - part * r.key_step;
      const RingRound round = run_ring_round(job_, group_, key, r.bytes, r.expert_bytes, r.across_replicas);
      if (!round.ran)
        continue;
      const double moved = round.bytes + round.expert_bytes;
      for (size_t i = 0; i < members.size(); ++i)
        job_.recorder.record_collective(members[i], r.step, r.kind, true, round.t_start_s, round.t_end_s, moved, moved,
                                        round.joules[i], 3);
      trace_ring_round(job_, group_, round, r.kind, key, r.across_replicas);
    }
    (r.done ? r.done : stream.done)->release();
  }
}

namespace {

// Waits (the group's StageActor) for a request, from the end of the compute queued before.
void await_pending(StageJob& job, long long group, const StageJob::Pending& pending) {
  job.settle(group);
  if (pending.ticket >= 0)
    job.data_collective->wait_queued(job.members[size_t(group)].front(), pending.ticket);
  else
    pending.done->acquire();
}

} // namespace

StageJob::Pending hand_over(StageJob& job, long long group, StageJob::DpRequest request) {
  StageJob::DpStream& stream = job.dp_streams[size_t(group)];
  if (job.timed_streams()) { // ready when the compute queued before it ends: nothing to settle
    const double queued_until_s = job.queued_until_s[size_t(group)];
    const double ready_s = queued_until_s >= 0 ? queued_until_s : sg4::Engine::get_clock();
    const long long ticket = job.data_collective->queue(job.members[size_t(group)].front(), request.step,
                                                        part_of(request.kind), request.bytes / job.data_collective_bytes,
                                                        request.key, ready_s, true);
    if (!request.awaited) {
      ++stream.pushed;
      stream.counted_tickets.push_back(ticket);
    }
    return {nullptr, ticket};
  }
  job.settle(group); // the data is ready when the compute before it has ended
  if (request.awaited)
    request.done = simgrid::s4u::Semaphore::create(0);
  else
    ++stream.pushed;
  StageJob::Pending pending{request.done, -1};
  stream.requests.push_back(std::move(request));
  stream.queued->release();
  return pending;
}

void wait_for_stream(StageJob& job, long long group, long long step, trace::TracePhase kind) {
  job.settle(group);
  StageJob::DpStream& stream = job.dp_streams[size_t(group)];
  const double t_start = sg4::Engine::get_clock();
  if (job.timed_streams() && !stream.counted_tickets.empty()) {
    // The stream runs in order: once the last has ended, so have the others (waited for without a
    // SimGrid call, so that the runner forgets them).
    const long long rank = job.members[size_t(group)].front();
    job.data_collective->wait_queued(rank, stream.counted_tickets.back());
    for (long long ticket : stream.counted_tickets)
      if (ticket != stream.counted_tickets.back())
        job.data_collective->wait_queued(rank, ticket);
    stream.counted_tickets.clear();
    stream.pushed = 0;
  }
  for (; stream.pushed > 0; --stream.pushed)
    stream.done->acquire();
  const double t_end = sg4::Engine::get_clock();
  for (long long rank : job.members[size_t(group)])
    job.recorder.record_exposed_wait(rank, step, kind, t_start, t_end);
}

void post_param_gathers(StageJob& job, long long group, long long step) {
  if (!job.param_gather_overlap())
    return;
  StageJob::DpStream& stream = job.dp_streams[size_t(group)];
  const auto& chunks = job.buckets[size_t(job.group_stage[size_t(group)])];
  stream.param_gathers.assign(chunks.size(), {});
  stream.param_gathers_waited.assign(chunks.size(), 0);
  long long index = 5000000; // apart from the reduce-scatters' bucket indices (bucket_round_key)
  for (size_t chunk = 0; chunk < chunks.size(); ++chunk)
    for (auto b = chunks[chunk].rbegin(); b != chunks[chunk].rend(); ++b) { // backward order, reversed
      const StageJob::Pending done =
          hand_over(job, group,
                    {step, bucket_round_key(step, index++, 0), 1, trace::TracePhase::AllGather, b->bytes,
                     b->expert_bytes, true});
      stream.param_gathers[chunk].emplace_back(b->after_layer, done);
    }
}

void wait_param_gathers(StageJob& job, long long group, long long step, long long chunk, long long layer) {
  if (!job.param_gather_overlap())
    return;
  StageJob::DpStream& stream = job.dp_streams[size_t(group)];
  const auto& gathers = stream.param_gathers[size_t(chunk)];
  size_t& waited = stream.param_gathers_waited[size_t(chunk)];
  auto needed = [&] { return waited < gathers.size() && gathers[waited].first <= layer; };
  if (!needed())
    return;
  // From the end of the compute queued before (the clock, if none).
  double& queued_until_s = job.queued_until_s[size_t(group)];
  const double t_start = queued_until_s >= 0 ? queued_until_s : sg4::Engine::get_clock();
  double t_end = t_start;
  // On a timed stream, gathers that have ended already are waited for without a SimGrid call; if all
  // have, the compute resumes after the last of them.
  double end_s = 0;
  while (job.timed_streams() && needed() &&
         job.data_collective->queued_ended(job.members[size_t(group)].front(), gathers[waited].second.ticket, end_s)) {
    t_end = std::max(t_end, end_s);
    ++waited;
  }
  if (needed()) {
    job.settle(group);
    if (t_end > sg4::Engine::get_clock())
      sg4::this_actor::sleep_until(t_end);
    for (; needed(); ++waited)
      await_pending(job, group, gathers[waited].second);
    t_end = sg4::Engine::get_clock();
  } else if (t_end > t_start) {
    queued_until_s = t_end;
  }
  if (t_end > t_start)
    for (long long rank : job.members[size_t(group)])
      job.recorder.record_exposed_wait(rank, step, trace::TracePhase::AllGather, t_start, t_end);
}

namespace {

// FSDP's board keys, below every bucket's: (step, micro-batch, what: 0 forward gather, 1 backward
// gather, 2 the whole model's reduce-scatter, 3 a layer's; HSDP's all-reduce across the replicas
// after them, its two ring rounds 4 and 5 after 2, 6 and 7 after 3; layer). fsdp_key(what + 1) is
// fsdp_key(what) - fsdp_key_step.
long long fsdp_key_step(const StageJob& job) { return job.scenario.shape.layers + 1; }
long long fsdp_key(const StageJob& job, long long step, long long mb, int what, long long layer) {
  return -(1LL << 52) -
         (((step * (job.scenario.microbatches + 1) + mb + 1) * 8 + what) * fsdp_key_step(job) + layer);
}

// One ring round on the compute stream, recorded as `kind`.
void compute_stream_round(StageJob& job, long long group, long long step, long long mb, long long key,
                          double bytes, trace::TracePhase kind, bool across_replicas) {
  if (run_data_collective(job, group, step, kind, bytes, key, false))
    return;
  const RingRound r = run_ring_round(job, group, key, bytes, 0.0, across_replicas);
  if (!r.ran)
    return;
  const std::vector<long long>& from = job.members[size_t(group)];
  for (size_t i = 0; i < from.size(); ++i) {
    job.recorder.record_parallel(from[i], {step, mb, -1}, kind, r.t_start_s, r.t_end_s, r.bytes, r.bytes,
                                 r.joules[i], 3);
    job.recorder.record_sync_wait(from[i], kind, r.t_all_in_s - r.t_start_s);
  }
  trace_ring_round(job, group, r, kind, key, across_replicas);
}

// The whole model's units at once, on the compute stream (FSDP without overlap); HSDP's reduce-scatter
// is followed by the shard's all-reduce across the replica groups (2 ring rounds of bytes / shard).
void fsdp_round(StageJob& job, long long group, long long step, long long mb, int what, trace::TracePhase kind) {
  job.settle(group);
  double bytes = 0;
  for (double unit : job.fsdp_unit_bytes)
    bytes += unit;
  compute_stream_round(job, group, step, mb, fsdp_key(job, step, mb, what, 0), bytes, kind, false);
  if (what == 2 && job.replica_ring_size > 1)
    for (int part = 0; part < 2; ++part)
      compute_stream_round(job, group, step, mb, fsdp_key(job, step, mb, 4 + part, 0),
                           bytes / double(job.dense_ring_size), trace::TracePhase::AllReduce, true);
}

void push_gather(StageJob& job, long long group, long long step, long long mb, int pass, long long layer) {
  StageJob::DpStream& stream = job.dp_streams[size_t(group)];
  stream.gathered = hand_over(job, group,
                              {step, fsdp_key(job, step, mb, pass, layer), 1, trace::TracePhase::AllGather,
                               job.fsdp_unit_bytes[size_t(layer)], 0.0, true});
  stream.gathered_pass = pass;
  stream.gathered_layer = layer;
}

} // namespace

void fsdp_before_pass(StageJob& job, long long group, long long step, long long mb, bool forward) {
  if (job.fsdp() && !job.dp_overlap())
    fsdp_round(job, group, step, mb, forward ? 0 : 1, trace::TracePhase::AllGather);
}

void fsdp_before_layer(StageJob& job, long long group, long long step, long long mb, bool forward, long long layer) {
  if (!job.fsdp() || !job.dp_overlap())
    return;
  StageJob::DpStream& stream = job.dp_streams[size_t(group)];
  const int pass = forward ? 0 : 1;
  if (!stream.gathered.valid()) // a micro-batch's first unit: nothing gathered it ahead
    push_gather(job, group, step, mb, pass, layer);
  const StageJob::Pending ready = stream.gathered;
  if (stream.gathered_pass != pass || stream.gathered_layer != layer)
    throw std::logic_error("FSDP gathered layer " + std::to_string(stream.gathered_layer) + " ahead, not " +
                           std::to_string(layer));
  stream.gathered = {};
  // The next unit while this one computes: forward, the next layer, and after the last the first
  // layer of the backward (the LM head runs between); backward, the layer below.
  const long long layers = job.scenario.shape.layers;
  if (forward)
    push_gather(job, group, step, mb, layer + 1 < layers ? 0 : 1, layer + 1 < layers ? layer + 1 : layers - 1);
  else if (layer > 0)
    push_gather(job, group, step, mb, 1, layer - 1);
  job.settle(group);
  const double t_start = sg4::Engine::get_clock();
  await_pending(job, group, ready);
  const double t_end = sg4::Engine::get_clock();
  for (long long rank : job.members[size_t(group)])
    job.recorder.record_exposed_wait(rank, step, trace::TracePhase::AllGather, t_start, t_end);
}

void fsdp_after_backward(StageJob& job, long long group, long long step, long long mb, long long layer) {
  if (!job.fsdp() || !job.dp_overlap())
    return;
  const double unit_bytes = job.fsdp_unit_bytes[size_t(layer)];
  hand_over(job, group,
            {step, fsdp_key(job, step, mb, 3, layer), 1, trace::TracePhase::ReduceScatter, unit_bytes, 0.0, false});
  if (job.replica_ring_size > 1) // HSDP: then the shard's all-reduce across the replicas, on the stream
    hand_over(job, group,
              {step, fsdp_key(job, step, mb, 6, layer), 2, trace::TracePhase::AllReduce,
               unit_bytes / double(job.dense_ring_size), 0.0, false, true, fsdp_key_step(job)});
}

void fsdp_reduce_after_flush(StageJob& job, long long group, long long step) {
  if (job.dp_overlap())
    wait_for_stream(job, group, step, trace::TracePhase::ReduceScatter);
  else
    fsdp_round(job, group, step, -1, 2, trace::TracePhase::ReduceScatter);
}

} // namespace memwall::sim::parallel
