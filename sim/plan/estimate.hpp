// The planner's fast estimate of a layout's step time: the cost model's per-GPU work (phase_plan, no
// SimGrid) and alpha-beta communication on two link classes read off the fabric (inside a server,
// between servers). It sees no contention beyond that: the simulation of the best candidates does.
//
//   step = (m + (p - 1) / v) max_s T_s + 2 (p v - 1) t_send + max_s (t_dp,s + t_opt,s)
//
// T_s: stage s's forward and backward of one micro-batch (compute, exposed TP / CP / EP
// communication); (p - 1) / v of them is the pipeline's bubble; t_send one activation between stages
// (the fill and the drain wait for p v - 1 of them each); t_dp the stage's gradient ring over its
// data x context replicas (not overlapped, as the engine runs a grouped layout's). Without model
// parallelism the chosen all-reduce (or ZeRO-3's gathers) is exposed in full, or, with `overlap`, all
// but the last micro-batch's backward (zero1's all-gathers beside the forward are counted as in an
// all-reduce: an estimate; the simulation of a candidate is exact).
#pragma once

#include "sim/scenario/scenario.hpp"

namespace memwall::plan {

// Alpha-beta figures of the two link classes a layout's groups use.
struct LinkFigures {
  double bytes_per_s = 0;
  double latency_s = 0; // along the route, plus the fabric's per-message software latency
};
struct FabricFigures {
  long long gpus_per_node = 1; // GPUs that share the fast class
  LinkFigures intra, inter;
  long long leaf_gpus = 0; // GPUs under one leaf switch (0: no oversubscription to apply)
  bool nic_per_gpu = false; // a NIC per GPU: a ring's channels cross servers on several NICs at once
  double oversubscription = 1;
};

// From the fabric graph: the route between GPUs 0 and 1 (one server), and between GPU 0 and the
// first GPU of the last server. Per-server NICs are shared by the server's GPUs.
FabricFigures fabric_figures(const topologies::FabricSpec& spec, long long gpus);

struct StepEstimate {
  double step_s = 0;
  double compute_s = 0; // per micro-batch forward + backward times m, on the busiest stage
  double bubble_s = 0;
  double tp_s = 0, cp_s = 0, ep_s = 0; // exposed, per step, busiest stage
  double pp_s = 0;                     // activations between stages on the critical path
  double dp_s = 0;                     // gradient synchronisation exposed
  double optimizer_s = 0;
  double tokens_per_s_per_gpu = 0;
};

StepEstimate estimate_step(const sim::Scenario& scenario, const FabricFigures& fabric);

} // namespace memwall::plan
