#include "stage_actor.hpp"

#include "dp_sync.hpp"
#include "flights.hpp"

#include "model/training_plan.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <limits>

namespace memwall::sim::parallel {

namespace sg4 = simgrid::s4u;

RouteFigures route_figures(const Platform& platform, RunRecorder& recorder, sg4::Host* from, sg4::Host* to) {
  RouteFigures r;
  std::vector<sg4::Link*> links;
  from->route_to(to, links, &r.latency_s);
  double pj_per_bit = 0;
  r.bottleneck_bytes_per_s = links.empty() ? 0.0 : links.front()->get_bandwidth();
  for (const sg4::Link* link : links) {
    r.bottleneck_bytes_per_s = std::min(r.bottleneck_bytes_per_s, link->get_bandwidth());
    const auto p = platform.links->pj_per_bit.find(link->get_name());
    const double link_pj = p != platform.links->pj_per_bit.end() ? p->second : 0.0;
    pj_per_bit += link_pj;
    r.links.push_back(link->get_name());
    const auto c = platform.links->link_class.find(link->get_name());
    recorder.register_link(link->get_name(), c != platform.links->link_class.end() ? c->second : "", link->get_bandwidth(),
                           8.0 * link_pj * 1e-12);
  }
  r.j_per_byte = 8.0 * pj_per_bit * 1e-12;
  return r;
}

long long StageJob::group_of(long long stage, long long slot) const { return stage * slots() + slot; }

namespace {

// Starts a flow of `bytes` from each GPU of `from` to the GPU of the same TP rank in `to` (TP rank
// 0's alone where the planes mirror one another: it stands for every rank's).
void post_flows(const StageJob& job, const std::vector<long long>& from, const std::vector<long long>& to,
                double bytes, Flights& flights) {
  for (size_t i = 0; i < (job.mirror_planes ? 1 : from.size()); ++i)
    post(job, flights, from[i], to[i], bytes);
}

// Sends `bytes` from each member of `from` to the same TP rank of `to` at once and waits for all;
// with `record_now`, records each member's share. Returns when the last flow is done.
void send_flows(StageJob& job, const std::vector<long long>& from, const std::vector<long long>& to,
                const std::vector<RouteFigures>& routes, double bytes, const PhaseContext& where,
                trace::TracePhase kind, double t_start_s, bool record_now, int64_t collective_id) {
  Flights flights;
  post_flows(job, from, to, bytes, flights);
  await(job, flights, from.front());
  if (!record_now)
    return;
  const double t_end = sg4::Engine::get_clock();
  for (size_t i = 0; i < from.size(); ++i) {
    job.recorder.record_parallel(from[i], where, kind, t_start_s, t_end, bytes, 0.0, bytes * routes[i].j_per_byte, 1);
    job.recorder.record_parallel(to[i], where, kind, t_end, t_end, 0.0, bytes, 0.0, 0);
    if (job.recorder.tracing())
      job.recorder.record_message({int32_t(from[i]), int32_t(to[i]), bytes, t_start_s,
                                   flights.comms[job.mirror_planes ? 0 : i]->get_finish_time(),
                                   collective_id, kind},
                                  routes[i].links);
  }
}

} // namespace

long long StageActor::virtual_stage(const pipeline::PipelineOp& op) const {
  return op.chunk * job_.scenario.layout.pipeline + job_.group_stage[size_t(group_)];
}

namespace {
// MEMWALL_SEPARATE_PHASES=1: every phase its own SimGrid execution (StageJob::queued_until_s).
bool separate_phases() {
  static const bool separate = [] {
    const char* v = std::getenv("MEMWALL_SEPARATE_PHASES");
    return v && *v && std::string(v) != "0";
  }();
  return separate;
}
} // namespace

namespace {
// `share` of a phase (its work, bytes and time in proportion), as a GEMM split at a bucket's tensor.
PhaseCost phase_part(const PhaseCost& phase, double share) {
  PhaseCost part = phase;
  part.flops *= share;
  part.hbm_bytes *= share;
  part.roofline_flops *= share;
  return part;
}
} // namespace

void StageJob::settle(long long group) const {
  double& until = queued_until_s[size_t(group)];
  if (until < 0)
    return;
  const double t_end = until;
  until = -1;
  sg4::this_actor::sleep_until(t_end);
}

void StageActor::compute(const PhaseContext& where, const PhaseCost& phase) const {
  if (phase.roofline_flops <= 0)
    return;
  double t_start = 0, t_end = 0;
  // Merged in pure data parallelism only: with TP, PP and CP together (TP 2 x PP 4 x CP 8 with
  // interleaving) merged phases gave flows a different overlap than executions (0.06% of the step),
  // not yet explained; such layouts execute each phase.
  if (separate_phases() || !job_.data_collective) {
    job_.settle(group_); // a wait that ended before it was asked about (wait_param_gathers)
    t_start = sg4::Engine::get_clock();
    sg4::this_actor::execute(phase.roofline_flops);
    t_end = sg4::Engine::get_clock();
  } else { // queued after the ones before it, slept through by settle()
    double& until = job_.queued_until_s[size_t(group_)];
    t_start = until >= 0 ? until : sg4::Engine::get_clock();
    t_end = t_start + phase.roofline_flops / sg4::this_actor::get_host()->get_speed();
    until = t_end;
  }
  for (long long rank : job_.members[size_t(group_)])
    job_.recorder.record_phase(rank, where, phase, t_start, t_end);
}

StageActor::TensorExchange StageActor::tensor_collectives_start(double all_reduces) const {
  TensorExchange x;
  const std::vector<long long>& members = job_.members[size_t(group_)];
  const size_t t = members.size();
  if (t < 2 || all_reduces <= 0)
    return x;
  job_.settle(group_);
  // A ring all-reduce is 2 (t - 1) steps of M / t per GPU. The steps of a layer's collectives are
  // aggregated into one flow per GPU (nothing else uses a TP group's links meanwhile), and the
  // latencies of the other steps are paid after it.
  x.steps = all_reduces * 2.0 * double(t - 1);
  x.bytes = x.steps * job_.tp_message_bytes / double(t);
  x.t_start_s = sg4::Engine::get_clock();
  // With private, alike hops one flow (the first hop) stands for the ring's t. With channels across
  // servers, a flow per (sender, receiver) with its share of the bytes.
  const std::vector<StageJob::TpFlow>& flows = job_.tp_flows[size_t(group_)];
  const size_t used = job_.tp_ring_private[size_t(group_)] ? 1 : flows.size();
  for (size_t i = 0; i < used; ++i)
    post(job_, x.flights, members[flows[i].from], flows[i].to, flows[i].share * x.bytes);
  return x;
}

void StageActor::tensor_collectives_finish(TensorExchange& x, const PhaseContext& where) const {
  if (x.flights.empty())
    return;
  job_.settle(group_);
  const std::vector<long long>& members = job_.members[size_t(group_)];
  const double t_wait = sg4::Engine::get_clock();
  await(job_, x.flights, members.front());
  double flows_end = x.t_start_s;
  for (const auto& comm : x.flights.comms)
    flows_end = std::max(flows_end, comm->get_finish_time());
  const double extra_s =
      (x.steps - 1.0) * job_.tp_latency_s[size_t(group_)] + x.steps * job_.scenario.fabric.message_latency_s;
  const double left_s = flows_end + extra_s - sg4::Engine::get_clock();
  if (left_s > 0)
    sg4::this_actor::sleep_for(left_s);
  const double t_end = sg4::Engine::get_clock();
  std::vector<double> joules(members.size(), 0.0);
  for (const StageJob::TpFlow& f : job_.tp_flows[size_t(group_)])
    joules[f.from] += f.share * x.bytes * f.route.j_per_byte;
  for (size_t i = 0; i < members.size(); ++i) // the time waited for it: all of it unless overlapped
    job_.recorder.record_parallel(members[i], where, trace::TracePhase::TensorComm, t_wait, t_end, x.bytes, x.bytes,
                                  joules[i], 2);
  if (job_.recorder.tracing()) { // every ring flow, as a message from its start to the collectives' end
    const int64_t id = job_.recorder.collective_id(trace::TracePhase::TensorComm, group_, tensor_calls_++);
    for (const StageJob::TpFlow& f : job_.tp_flows[size_t(group_)])
      job_.recorder.record_message({int32_t(members[f.from]), int32_t(f.to), f.share * x.bytes, x.t_start_s, t_end, id,
                                    trace::TracePhase::TensorComm},
                                   f.route.links);
  }
}

void StageActor::tensor_collectives(const PhaseContext& where, double all_reduces) const {
  TensorExchange x = tensor_collectives_start(all_reduces);
  tensor_collectives_finish(x, where);
}

StageActor::ContextExchange StageActor::context_exchange_start(double blocks) const {
  ContextExchange x;
  const long long c = job_.scenario.layout.context;
  if (c < 2)
    return x;
  job_.settle(group_);
  const long long slot = job_.group_replica[size_t(group_)];
  x.next_group = job_.group_of(job_.group_stage[size_t(group_)], slot / c * c + (slot % c + 1) % c);
  x.key = context_exchanges_++;
  x.bytes = blocks * double(c - 1) * job_.kv_bytes;
  x.t_start_s = sg4::Engine::get_clock();
  post_flows(job_, job_.members[size_t(group_)], job_.members[size_t(x.next_group)], x.bytes, x.flights);
  return x;
}

void StageActor::context_exchange_finish(ContextExchange& x, const PhaseContext& where) const {
  if (x.key < 0)
    return;
  job_.settle(group_);
  const double t_wait = sg4::Engine::get_clock();
  await(job_, x.flights, job_.members[size_t(group_)].front());
  double flows_end = x.t_start_s;
  for (const auto& comm : x.flights.comms)
    flows_end = std::max(flows_end, comm->get_finish_time());
  job_.cp_received[size_t(x.next_group)].at(x.key)->release(); // my blocks are in
  job_.cp_received[size_t(group_)].at(x.key)->acquire(); // and the previous rank's
  job_.cp_received[size_t(group_)].ready.erase(x.key);
  // The ring's other c - 2 steps' latencies, which overlap the compute too.
  const double steps = x.bytes / job_.kv_bytes;
  const double extra_s = (steps - double(steps > 0 ? 1 : 0)) * job_.cp_latency_s[size_t(group_)] +
                         steps * job_.scenario.fabric.message_latency_s;
  const double left_s = flows_end + extra_s - sg4::Engine::get_clock();
  if (left_s > 0)
    sg4::this_actor::sleep_for(left_s);
  const double t_end = sg4::Engine::get_clock();
  const std::vector<long long>& from = job_.members[size_t(group_)];
  for (size_t i = 0; i < from.size(); ++i)
    job_.recorder.record_parallel(from[i], where, trace::TracePhase::ContextComm, t_wait, t_end, x.bytes, x.bytes,
                                  x.bytes * job_.cp_routes[size_t(group_)][i].j_per_byte, 2);
  if (job_.recorder.tracing()) {
    const long long c = job_.scenario.layout.context, slot = job_.group_replica[size_t(group_)];
    const int64_t id = job_.recorder.collective_id(
        trace::TracePhase::ContextComm, job_.group_of(job_.group_stage[size_t(group_)], slot / c * c), x.key);
    for (size_t i = 0; i < from.size(); ++i)
      job_.recorder.record_message({int32_t(from[i]), int32_t(job_.members[size_t(x.next_group)][i]), x.bytes,
                                    x.t_start_s, t_end, id, trace::TracePhase::ContextComm},
                                   job_.cp_routes[size_t(group_)][i].links);
  }
}

void StageActor::wait_pipeline(Board& board, long long key, const PhaseContext& where) const {
  job_.settle(group_);
  const double t_start = sg4::Engine::get_clock();
  board.at(key)->acquire();
  board.ready.erase(key);
  const double t_end = sg4::Engine::get_clock();
  const auto posted = board.posted_s.find(key);
  const double t_posted = posted != board.posted_s.end() ? posted->second : t_start;
  board.posted_s.erase(key);
  for (long long rank : job_.members[size_t(group_)]) {
    job_.recorder.record_parallel(rank, where, trace::TracePhase::PipelineWait, t_start, t_end, 0, 0, 0, 1);
    job_.recorder.split_pipeline_wait(rank, t_start, t_posted, t_end);
  }
}

void StageActor::forward(long long step, const pipeline::PipelineOp& op) const {
  const model::ParallelLayout& layout = job_.scenario.layout;
  const long long vs = virtual_stage(op), last = layout.pipeline * layout.virtual_stages - 1;
  const model::LayerRange range = model::chunk_layers(layout, job_.group_stage[size_t(group_)], op.chunk);
  fsdp_before_pass(job_, group_, step, op.microbatch, true);
  if (vs > 0) {
    wait_pipeline(job_.forward_in[size_t(group_)], job_.pipeline_key(step, op.microbatch, op.chunk),
                  {step, op.microbatch, -1});
  } else { // the embedding lookup (FSDP: its unit gathered first) is all-reduced over the TP group
    fsdp_before_layer(job_, group_, step, op.microbatch, true, range.first);
    if (op.microbatch == 0)
      wait_param_gathers(job_, group_, step, op.chunk, range.first);
    tensor_collectives({step, op.microbatch, 0}, 1);
  }
  for (long long layer = range.first; layer < range.last; ++layer) {
    if (vs > 0 || layer > range.first)
      fsdp_before_layer(job_, group_, step, op.microbatch, true, layer);
    if (op.microbatch == 0) // the parameters the last optimizer step updated, gathered beside the forward
      wait_param_gathers(job_, group_, step, op.chunk, layer);
    const LayerWork& w = job_.work.layer(layer);
    // Keys and values once round the context group; two TP all-reduces (after attention and after
    // the MLP); an MoE layer's dispatch and combine.
    layer_pass({step, op.microbatch, layer}, w, w.fwd_gemm, w.fwd_elementwise, 1, 2);
  }
  const PhaseContext where{step, op.microbatch, job_.scenario.shape.layers};
  if (vs == last) {
    if (op.microbatch == 0)
      wait_param_gathers(job_, group_, step, op.chunk, std::numeric_limits<long long>::max());
    compute(where, job_.work.head.fwd_gemm);
    compute(where, job_.work.head.fwd_elementwise);
    return;
  }
  send_to_virtual_stage(step, op.microbatch, vs + 1, true);
}

void StageActor::send_to_virtual_stage(long long step, long long microbatch, long long to, bool forward) const {
  job_.settle(group_);
  const long long p = job_.scenario.layout.pipeline;
  SendQueue& q = (forward ? job_.forward_sends : job_.backward_sends)[size_t(group_)];
  const long long key = job_.pipeline_key(step, microbatch, to / p);
  const long long to_group = job_.group_of(to % p, job_.group_replica[size_t(group_)]);
  (forward ? job_.forward_in : job_.backward_in)[size_t(to_group)].posted_s[key] = sg4::Engine::get_clock();
  q.requests.push_back({key, {step, microbatch, -1}, to_group, forward});
  q.queued->release();
}

void StageActor::layer_pass(const PhaseContext& where, const LayerWork& w, const PhaseCost& gemm,
                            const PhaseCost& elementwise, double kv_blocks, double all_reduces,
                            const pipeline::PipelineOp* handing) const {
  ContextExchange kv = context_exchange_start(kv_blocks);
  const bool overlap_tp = job_.scenario.layout.tp_overlap; // the collectives beside the GEMMs
  TensorExchange tp = overlap_tp ? tensor_collectives_start(all_reduces) : TensorExchange{};
  // moe_a2a_overlap: the layer's all-to-alls beside its compute, as Megatron-Core's
  // overlap_moe_expert_parallel_comm runs one micro-batch's beside another's compute in the steady
  // state (an upper bound, like tp_overlap: warm-up and cool-down have nothing to pair with).
  const bool overlap_ep = w.moe && job_.scenario.layout.moe_a2a_overlap;
  ExpertExchange ep = overlap_ep ? expert_all_to_all_start(all_reduces) : ExpertExchange{};
  backward_gemm(where, with_expert_load(w, gemm), handing);
  compute(where, elementwise);
  context_exchange_finish(kv, where);
  if (overlap_tp)
    tensor_collectives_finish(tp, where);
  else
    tensor_collectives(where, all_reduces);
  if (overlap_ep)
    expert_all_to_all_finish(ep, where, true);
  else if (w.moe)
    expert_all_to_all(where, all_reduces);
}

void StageActor::backward(long long step, const pipeline::PipelineOp& op) const {
  const model::ParallelLayout& layout = job_.scenario.layout;
  const long long vs = virtual_stage(op), last = layout.pipeline * layout.virtual_stages - 1;
  fsdp_before_pass(job_, group_, step, op.microbatch, false);
  if (vs == last) {
    const PhaseContext where{step, op.microbatch, job_.scenario.shape.layers};
    compute(where, job_.work.head.bwd_elementwise);
    compute(where, job_.work.head.bwd_gemm);
  } else {
    wait_pipeline(job_.backward_in[size_t(group_)], job_.pipeline_key(step, op.microbatch, op.chunk),
                  {step, op.microbatch, -1});
  }
  const model::LayerRange range = model::chunk_layers(layout, job_.group_stage[size_t(group_)], op.chunk);
  for (long long layer = range.last - 1; layer >= range.first; --layer) {
    fsdp_before_layer(job_, group_, step, op.microbatch, false, layer);
    const LayerWork& w = job_.work.layer(layer);
    const bool recomputed = model::layer_recomputed(job_.scenario.training, layer);
    // Keys and values and their gradients round the context group (once more for a recomputed
    // forward); the backward's two TP all-reduces (input gradients of the column-parallel GEMMs) and
    // the recomputed forward's two again; the same for an MoE layer's all-to-alls.
    layer_pass({step, op.microbatch, layer}, w, w.bwd_gemm, w.bwd_elementwise, recomputed ? 3 : 2,
               recomputed ? 4 : 2, hands_over_buckets(op) ? &op : nullptr);
    hand_over_buckets(step, op, layer);
    fsdp_after_backward(job_, group_, step, op.microbatch, layer);
  }
  if (vs > 0)
    send_to_virtual_stage(step, op.microbatch, vs - 1, false);
}

void StageActor::ring_round(long long step, int part, double bytes_per_gpu, trace::TracePhase kind,
                            bool across_replicas) const {
  job_.settle(group_);
  const long long stage = job_.group_stage[size_t(group_)];
  // Replica rounds' keys lie apart from the flush's (2 step + part): a group may enter its replica
  // round while a neighbour still waits in its shard group's round.
  const long long round = (across_replicas ? (1LL << 50) : 0) + 2 * step + part;
  // The chosen collective runs an all-reduce whole: at its first round, nothing at the second.
  if (job_.data_collective && !(kind == trace::TracePhase::AllReduce && part == 1)) {
    run_data_collective(job_, group_, step, kind, bytes_per_gpu, round, false);
    return;
  }
  if (job_.data_collective)
    return;
  const RingRound r = run_ring_round(job_, group_, round, bytes_per_gpu,
                                     across_replicas ? 0.0 : job_.stage_expert_gradient_bytes[size_t(stage)],
                                     across_replicas);
  if (!r.ran)
    return;
  const std::vector<long long>& from = job_.members[size_t(group_)];
  for (size_t i = 0; i < from.size(); ++i) {
    job_.recorder.record_parallel(from[i], {step, -1, -1}, kind, r.t_start_s, r.t_end_s, r.bytes + r.expert_bytes,
                                  r.bytes + r.expert_bytes, r.joules[i], 3);
    job_.recorder.record_sync_wait(from[i], kind, r.t_all_in_s - r.t_start_s);
  }
  trace_ring_round(job_, group_, r, kind, round, across_replicas);
}

bool StageActor::hands_over_buckets(const pipeline::PipelineOp& op) const {
  // Gradients accumulate until the chunk's last micro-batch; FSDP reduce-scatters per layer instead.
  return job_.dp_overlap() && !job_.fsdp() && op.microbatch == job_.scenario.microbatches - 1;
}

void StageActor::hand_over_bucket(long long step, const StageJob::GradientBucket& b) const {
  const bool sharded = job_.scenario.training.sharding != model::Sharding::None;
  const long long index = job_.dp_streams[size_t(group_)].pushed;
  // An all-reduce, or the distributed optimizer's (FSDP's) reduce-scatter
  hand_over(job_, group_,
            {step, bucket_round_key(step, index, 0), sharded ? 1 : 2,
             sharded ? trace::TracePhase::ReduceScatter : trace::TracePhase::AllReduce, b.bytes, b.expert_bytes,
             false});
  if (job_.replica_ring_size > 1) // HSDP: then the shard's gradients across the shard groups
    hand_over(job_, group_,
              {step, bucket_round_key(step, kReplicaBucketIndex + index, 0), 2, trace::TracePhase::AllReduce,
               b.bytes / double(job_.dense_ring_size), 0.0, false, true});
}

void StageActor::hand_over_buckets(long long step, const pipeline::PipelineOp& op, long long after_layer) const {
  if (!hands_over_buckets(op))
    return;
  for (const StageJob::GradientBucket& b : job_.buckets[size_t(job_.group_stage[size_t(group_)])][size_t(op.chunk)])
    if (b.after_layer == after_layer && b.gemm_share >= 1.0)
      hand_over_bucket(step, b);
}

void StageActor::backward_gemm(const PhaseContext& where, const PhaseCost& gemm,
                               const pipeline::PipelineOp* handing) const {
  double done = 0; // share of the GEMM computed
  if (handing)
    for (const StageJob::GradientBucket& b :
         job_.buckets[size_t(job_.group_stage[size_t(group_)])][size_t(handing->chunk)]) {
      if (b.after_layer != where.layer || b.gemm_share >= 1.0)
        continue;
      compute(where, phase_part(gemm, b.gemm_share - done)); // up to the bucket's last tensor
      hand_over_bucket(where.step, b);
      done = b.gemm_share;
    }
  compute(where, done > 0 ? phase_part(gemm, 1.0 - done) : gemm);
}

void StageActor::operator()() const {
  const long long stage = job_.group_stage[size_t(group_)];
  const double gradient_bytes = job_.stage_gradient_bytes[size_t(stage)];
  const bool sharded = job_.scenario.training.sharding != model::Sharding::None;
  for (long long step = 0; step < job_.scenario.steps; ++step) {
    post_param_gathers(job_, group_, step);
    for (const pipeline::PipelineOp& op : job_.orders[size_t(stage)])
      op.forward ? forward(step, op) : backward(step, op);
    // After the flush: the stage's gradients over its replicas (Megatron-LM 2021: not overlapped).
    // ZeRO-1 (the distributed optimizer) reduce-scatters, updates its shard, all-gathers. FSDP
    // (zero2 / zero3) under a pipeline does the same: PyTorch's pipelining keeps a stage's parameters
    // gathered and its gradients unreduced over the micro-batches (torch/distributed/pipelining/
    // stage.py, backward_maybe_with_nosync: set_reshard_after_backward(False),
    // set_requires_gradient_sync(False)) and reduce-scatters them after the last backward; the
    // parameters are gathered again for the next step's first forward (torchtitan and Llama 3 do not
    // reshard after the forward under PP). Same bytes, same place in the step.
    if (job_.fsdp()) { // reduce-scattered layer by layer (or now), nothing to gather after
      fsdp_reduce_after_flush(job_, group_, step);
      compute({step, -1, -1}, job_.stage_optimizer[size_t(stage)]);
    } else if (job_.dp_overlap()) { // the buckets went beside the backward: wait for the last
      wait_for_stream(job_, group_, step, sharded ? trace::TracePhase::ReduceScatter : trace::TracePhase::AllReduce);
      compute({step, -1, -1}, job_.stage_optimizer[size_t(stage)]);
      // zero1's updated parameters: gathered beside the next step's forward (post_param_gathers)
    } else if (sharded) {
      ring_round(step, 0, gradient_bytes, trace::TracePhase::ReduceScatter);
      if (job_.replica_ring_size > 1) // HSDP: the shard's gradients across the shard groups
        for (int part = 0; part < 2; ++part)
          ring_round(step, part, gradient_bytes / double(job_.dense_ring_size), trace::TracePhase::AllReduce, true);
      compute({step, -1, -1}, job_.stage_optimizer[size_t(stage)]);
      ring_round(step, 1, gradient_bytes, trace::TracePhase::AllGather);
    } else {
      ring_round(step, 0, gradient_bytes, trace::TracePhase::AllReduce);
      ring_round(step, 1, gradient_bytes, trace::TracePhase::AllReduce);
      compute({step, -1, -1}, job_.stage_optimizer[size_t(stage)]);
    }
  }
  job_.settle(group_);
  const double t_end = sg4::Engine::get_clock();
  for (long long rank : job_.members[size_t(group_)])
    job_.recorder.record_finish(rank, t_end);
}

void SendActor::operator()() const {
  sg4::Actor::self()->daemonize(); // ends with the stage actors
  SendQueue& queue = forward_ ? job_.forward_sends[size_t(group_)] : job_.backward_sends[size_t(group_)];
  const std::vector<RouteFigures>& routes = (forward_ ? job_.forward_routes : job_.backward_routes)[size_t(group_)];
  while (true) {
    queue.queued->acquire();
    const PipelineSend r = queue.requests.front();
    queue.requests.pop_front();
    const std::vector<long long>& from = job_.members[size_t(group_)];
    const std::vector<long long>& to = job_.members[size_t(r.to_group)];
    send_flows(job_, from, to, routes, job_.pp_message_bytes, r.where, trace::TracePhase::PipelineSend,
               sg4::Engine::get_clock(), true,
               job_.recorder.collective_id(trace::TracePhase::PipelineSend, r.to_group, r.key, r.forward));
    (r.forward ? job_.forward_in : job_.backward_in)[size_t(r.to_group)].at(r.key)->release();
  }
}

} // namespace memwall::sim::parallel
