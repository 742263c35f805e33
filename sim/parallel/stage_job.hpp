// What the actors of a run share (every layout; pure data parallelism's groups are single GPUs): the
// layout, each stage's work and order of forwards and backwards, the GPUs' hosts, and the boards on
// which one actor tells another that its data has arrived.
//
// One actor drives one tensor-parallel group: its t GPUs run the same phases at the same time (that
// is what TP does), so one SimGrid execution on the group's slowest GPU stands for all t, and each
// GPU's totals are recorded. Every message is still its own flow between the GPUs that exchange it,
// on the route the fabric gives them: t flows per TP collective step, t per pipeline transfer (each
// TP rank sends its 1 / t of the activations, Megatron-LM's scatter/gather), t rings for the
// data-parallel gradient sync.
#pragma once

#include "sim/engine/collective_runner.hpp"
#include "sim/engine/link_events.hpp"
#include "sim/engine/phase_plan.hpp"
#include "pipeline/schedule.hpp"
#include "sim/engine/platform_builder.hpp"
#include "sim/engine/run_recorder.hpp"

#include <simgrid/s4u/Semaphore.hpp>

#include <simgrid/s4u/Comm.hpp>

#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace memwall::sim::parallel {

// "Data for `key` has arrived": the sender's side releases, the receiver's side acquires. SimGrid
// actors never preempt each other, so the map needs no lock.
struct Board {
  std::unordered_map<long long, simgrid::s4u::SemaphorePtr> ready;
  // When the sending stage handed each key's data to its send stream: a receiver's wait before then
  // is the pipeline bubble, after it the transfer (the breakdown's pp_bubble_s, pp_transfer_s).
  std::unordered_map<long long, double> posted_s;
  simgrid::s4u::SemaphorePtr at(long long key) {
    auto& s = ready[key];
    if (!s)
      s = simgrid::s4u::Semaphore::create(0);
    return s;
  }
};

// A route's figures, looked up once per pair.
struct RouteFigures {
  double latency_s = 0;
  double j_per_byte = 0;
  double bottleneck_bytes_per_s = 0;
  std::vector<std::string> links;
};
RouteFigures route_figures(const Platform& platform, RunRecorder& recorder, simgrid::s4u::Host* from,
                           simgrid::s4u::Host* to);

// A pipeline transfer queued on a group's send stream.
struct PipelineSend {
  long long key = 0;    // identifies (step, micro-batch, chunk) at the receiver
  PhaseContext where;   // for the record
  long long to_group = 0;
  bool forward = true;  // activations (forward) or gradients (backward)
};

struct SendQueue {
  std::deque<PipelineSend> requests;
  simgrid::s4u::SemaphorePtr queued; // made with its SendActor
};

struct StageJob {
  StageJob(const Scenario& s, const StepWork& w, const Platform& p, RunRecorder& r)
      : scenario(s), work(w), platform(p), recorder(r) {}
  const Scenario& scenario;
  const StepWork& work;
  const Platform& platform;
  RunRecorder& recorder;
  long long groups = 0;                                // TP groups: gpus / t
  std::vector<std::vector<long long>> members;         // per group: its t ranks, TP rank order
  std::vector<long long> group_stage, group_replica;   // per group: pipeline stage, slot (replica x c + context rank)
  std::vector<std::vector<pipeline::PipelineOp>> orders; // per stage
  double tp_message_bytes = 0;                         // one TP all-reduce's payload per micro-batch
  double pp_message_bytes = 0;                         // per TP rank per micro-batch
  std::vector<double> stage_gradient_bytes;            // per stage, per GPU: dense (over the replicas)
  // Per stage, per GPU: its routed experts' gradients, reduced over the expert-data-parallel group
  // (expert_data_rings: expert_ring_size[stage] GPUs; 1 when every GPU holds its own experts).
  std::vector<double> stage_expert_gradient_bytes;
  std::vector<long long> expert_ring_size;
  std::vector<PhaseCost> stage_optimizer;              // per stage, per GPU
  // Boards per group: activations in, gradients in, and the data-parallel ring's handshakes.
  std::vector<Board> forward_in, backward_in, ring_ready, ring_received;
  std::vector<SendQueue> forward_sends, backward_sends; // per group
  // Per group: its TP ring's step as NCCL's channels run it (collectives/channels.hpp), a flow per
  // (sender, receiver): the sending member's index, the receiving rank, its share of the ring's bytes
  // and its route. Without channels, or inside one server, member i -> member i + 1, share 1.
  struct TpFlow {
    size_t from = 0;
    long long to = 0;
    double share = 1;
    RouteFigures route;
  };
  std::vector<std::vector<TpFlow>> tp_flows;
  // Per group: its share of the data-parallel rings (one per TP rank, over the stage's replicas and
  // context ranks) as NCCL's channels run them: per flow the sending member's index, the receiving
  // group and rank, its share of the bytes and its route. Without channels, or with one replica per
  // server, member i -> member i of the next replica, share 1. The groups this one sends to and
  // receives from (the ring's handshakes), and the longest latency of the TP flows and of these.
  struct RingFlow {
    size_t from = 0;
    long long to_group = 0, to = 0;
    double share = 1;
    RouteFigures route;
  };
  std::vector<std::vector<RingFlow>> ring_flows;
  std::vector<std::vector<RingFlow>> expert_ring_flows; // the same for the expert-data-parallel rings
  // The handshakes cover both kinds of ring.
  std::vector<std::vector<long long>> ring_to, ring_from;
  std::vector<double> tp_latency_s, ring_latency_s, expert_ring_latency_s;
  // HSDP (training.shard_group): the dense rings above run inside each shard group (dense_ring_size
  // members, ring_flows); the replica rings join the GPUs that hold the same shard across the shard
  // groups (replica_ring_size members), with their own handshakes. Without HSDP the dense rings span
  // every slot and there are no replica rings (replica_ring_size 1).
  long long dense_ring_size = 1, replica_ring_size = 1;
  std::vector<std::vector<RingFlow>> replica_ring_flows;
  std::vector<std::vector<long long>> replica_to, replica_from;
  std::vector<double> replica_ring_latency_s;
  // Per group, per TP rank: routes to the next and the previous virtual stage's group.
  std::vector<std::vector<RouteFigures>> forward_routes, backward_routes;
  // Per group: its TP ring's links carry nothing else in the job, each hop its own links, all hops
  // alike (latency, bottleneck). Then one flow stands for the ring's t flows and takes exactly their
  // time (CM02, no cross-traffic): one SimGrid activity instead of t.
  std::vector<bool> tp_ring_private;
  // The TP ranks' flows outside the TP rings form t planes that mirror one another (planes.hpp): only
  // TP rank 0's flows are simulated, and each rank's part is recorded on its own route.
  bool mirror_planes = false;
  // Expert parallelism (expert_exchange.hpp): blocks of E groups of a stage (replicas b E .. b E + E - 1),
  // each a communicator per TP rank. A flow in units of one message (a GPU's bytes to one peer).
  struct EpFlow {
    long long src = 0, dst = 0;
    double units = 0;
    RouteFigures route;
  };
  struct EpGate { // a barrier of the block's groups: how many arrived, who waits
    int arrived = 0;
    std::vector<long long> waiting;
  };
  struct EpBlock {
    std::vector<long long> groups;
    std::vector<EpFlow> legs; // the all-to-all's flows as NCCL sends them (PXN), for the trace
    double latency_s = 0;     // the longest leg's route
    std::unordered_map<long long, EpGate> gates;
  };
  struct EpTotals { // one GPU's part of one all-to-all, in units
    double sent_units = 0, received_units = 0, joules_per_unit = 0;
    long long legs = 0;
  };
  std::vector<EpBlock> ep_blocks;
  std::vector<long long> ep_block, ep_rank;          // per group: its block (-1: none), its index in it
  std::vector<std::vector<EpFlow>> ep_posts;         // per group: the flows its actor posts
  std::vector<std::vector<EpTotals>> ep_totals;      // per group, per member
  std::vector<simgrid::s4u::SemaphorePtr> ep_wake;   // per group: released at the gate it waits at
  double ep_message_bytes = 0; // one all-to-all's tokens x top_k x d x 2 B per GPU, before the split
  // Context parallelism: per group and TP rank the route to the next context rank (same replica),
  // the ring's handshakes, and a layer's keys and values on one GPU (its tokens, its heads).
  std::vector<std::vector<RouteFigures>> cp_routes;
  std::vector<double> cp_latency_s;
  std::vector<Board> cp_ready, cp_received;
  double kv_bytes = 0;
  // Data-parallel gradients beside the backward (training.overlap: bucketed; dp_sync.hpp). Per stage
  // and chunk, the buckets its last micro-batch's backward fills, in order: each is handed to the
  // stream once the gradient of its last tensor exists, while layer `after_layer`'s backward runs:
  // `gemm_share` < 1 when that is part way through the layer's backward GEMM (its weight tensors in
  // backward order), 1 after the layer's whole backward. Per group, its stream's queue; empty
  // without overlap.
  struct GradientBucket {
    long long after_layer = 0;
    double gemm_share = 1;
    double bytes = 0, expert_bytes = 0; // per GPU: dense, and routed experts'
  };
  std::vector<std::vector<std::vector<GradientBucket>>> buckets; // [stage][chunk]
  struct DpRequest {
    long long step = 0;
    long long key = 0; // its first ring round's board key; round k uses key - k x key_step
    int rounds = 1;    // 2: an all-reduce (reduce-scatter, then all-gather)
    trace::TracePhase kind = trace::TracePhase::AllReduce;
    double bytes = 0, expert_bytes = 0;
    bool awaited = false;         // waited for by itself (Pending), else counted in the stream's `done`
    bool across_replicas = false; // HSDP's replica rings, else the dense (and expert) rings
    long long key_step = 1;
    simgrid::s4u::SemaphorePtr done; // an awaited request's, on a stream actor (made by hand_over)
  };
  // A request handed to a stream, to be waited for: released semaphore, or a ticket of the chosen
  // collective's timed stream (timed_streams()).
  struct Pending {
    simgrid::s4u::SemaphorePtr done;
    long long ticket = -1;
    bool valid() const { return done || ticket >= 0; }
  };
  struct DpStream {
    std::deque<DpRequest> requests;
    simgrid::s4u::SemaphorePtr queued, done; // made with its DpStreamActor (none on a timed stream)
    long long pushed = 0; // this step's counted requests (buckets, FSDP reduce-scatters) so far
    std::vector<long long> counted_tickets; // timed_streams(): the counted requests' tickets, this step
    // FSDP: the unit gathered ahead, for (pass, layer); invalid when none is
    Pending gathered;
    int gathered_pass = 0;
    long long gathered_layer = 0;
    // The distributed optimizer's parameter all-gathers beside the forward (overlap_param_gather):
    // per chunk, in forward order, (the bucket's first layer, released when gathered); `waited` of
    // them already waited for this step.
    std::vector<std::vector<std::pair<long long, Pending>>> param_gathers;
    std::vector<size_t> param_gathers_waited;
  };
  std::vector<DpStream> dp_streams;
  bool dp_overlap() const { return !dp_streams.empty(); }
  // Pure data parallelism whose chosen collective is timed without SimGrid messages (every round
  // private: CollectiveRunner::streams_timed): a stream needs no actor. Each request is queued on the
  // runner's timed stream for the GPU, ready when the compute queued before it ends, and waited for by
  // its ticket.
  bool timed_streams() const { return data_collective && data_collective->streams_timed(); }
  // Megatron-Core's distributed optimizer with overlap_param_gather: zero1 with overlapped buckets.
  bool param_gather_overlap() const {
    return dp_overlap() && fsdp_unit_bytes.empty() && scenario.training.sharding != model::Sharding::None;
  }
  // FSDP without a pipeline (sharding zero3, pipeline 1; dp_sync.hpp): per layer, its unit's bytes per
  // GPU (layer 0's holds the embeddings and the LM head); empty otherwise.
  std::vector<double> fsdp_unit_bytes;
  bool fsdp() const { return !fsdp_unit_bytes.empty(); }
  // Pure data parallelism (no TP, PP, CP, EP groups, no HSDP): every GPU is its own group and the
  // gradient sync runs the collective the scenario chose (`cluster.collective`: ring, tree,
  // hierarchical, NVLS, auto; collectives/choice.hpp) on this runner instead of the rings above;
  // its schedule was built for `data_collective_bytes` per GPU (a collective of b bytes runs it
  // scaled by b / data_collective_bytes). Null otherwise.
  const CollectiveRunner* data_collective = nullptr;
  double data_collective_bytes = 0;
  // Link events (flights.hpp): what happened and a stall's report; null without link events. The
  // flows in flight, and what each had left when a link went down.
  FaultLog* faults = nullptr;
  mutable std::unordered_set<simgrid::s4u::Comm*> in_flight;
  mutable std::unordered_map<simgrid::s4u::Comm*, double> left_at_fault;

  // Per group: when the compute its actor queued ends (< 0: none queued). In pure data parallelism a
  // GPU's back-to-back phases are one SimGrid activity (a sleep to their end), each dated as SimGrid
  // dates an execution (start + work / speed); the actor settles them (sleeps to that end) before
  // anything else it does: a flow, a hand-over, a wait, the end of its run. MEMWALL_SEPARATE_PHASES=1
  // runs each phase as its own execution, the reference tests/check_merged_phases.py compares against.
  // A grouped layout executes each phase (StageActor::compute).
  mutable std::vector<double> queued_until_s;
  void settle(long long group) const; // called by the group's StageActor only

  long long group_of(long long stage, long long slot) const;
  long long slots() const { return scenario.layout.data * scenario.layout.context; }
  long long chunks() const { return scenario.layout.virtual_stages; }
  long long pipeline_key(long long step, long long microbatch, long long chunk) const {
    return (step * scenario.microbatches + microbatch) * chunks() + chunk;
  }
};

} // namespace memwall::sim::parallel
