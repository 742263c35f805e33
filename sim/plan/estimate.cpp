#include "estimate.hpp"

#include "sim/engine/phase_plan.hpp"
#include "topologies/fabric_loader.hpp"
#include "topologies/fabric_routes.hpp"

#include <algorithm>

namespace memwall::plan {

namespace {

constexpr double kActivationBytes = 2.0; // bf16 activations between GPUs (as sim/parallel)

LinkFigures route_figures(const topologies::FabricGraph& graph, topologies::RouteFinder& routes,
                          topologies::FabricVertex a, topologies::FabricVertex b, double efficiency,
                          double message_latency_s) {
  LinkFigures f{0, message_latency_s};
  double slowest = 0;
  for (const topologies::RouteHop& hop : routes.route(a, b)) {
    const topologies::FabricLink& link = graph[hop.edge];
    slowest = slowest == 0 ? link.bytes_per_s : std::min(slowest, link.bytes_per_s);
    f.latency_s += link.latency_s;
  }
  f.bytes_per_s = slowest * efficiency;
  return f;
}

// Whether a group of `size` members `stride` ranks apart stays inside one server.
bool inside_node(const FabricFigures& f, long long stride, long long size) {
  return stride * size <= f.gpus_per_node;
}

LinkFigures link_for(const FabricFigures& f, long long stride, long long size) {
  if (inside_node(f, stride, size))
    return f.intra;
  LinkFigures l = f.inter;
  if (f.leaf_gpus > 0 && stride * size > f.leaf_gpus)
    l.bytes_per_s /= f.oversubscription;
  return l;
}

// A ring run as NCCL's channels (collectives/channels.hpp): across servers with a NIC per GPU, its
// channels cross on min(channels, its GPUs per server) NICs at once, at most at the NVLink figure.
LinkFigures ring_link_for(const FabricFigures& f, long long stride, long long size, long long channels) {
  LinkFigures l = link_for(f, stride, size);
  if (inside_node(f, stride, size) || !f.nic_per_gpu)
    return l;
  const long long per_server = std::max(1LL, std::min(size, f.gpus_per_node / std::max(1LL, stride)));
  const long long nics = std::min(channels, per_server);
  l.bytes_per_s = std::min(l.bytes_per_s * double(nics), f.intra.bytes_per_s);
  return l;
}

// Rank distance between neighbours on an axis: the product of the degrees placed inside it.
long long stride_of(const model::ParallelLayout& l, model::Axis axis) {
  long long stride = 1;
  for (model::Axis a : l.placement) {
    if (a == axis)
      return stride;
    stride *= l.degree(a);
  }
  return stride;
}

double seconds(const sim::PhaseCost& c, double peak) {
  return c.roofline_flops / peak;
}

// A ring all-reduce's 2 (n - 1) steps of `bytes` / n each.
double ring_allreduce_s(double bytes, long long n, const LinkFigures& link) {
  if (n < 2 || bytes <= 0)
    return 0;
  return 2.0 * double(n - 1) * (bytes / double(n) / link.bytes_per_s + link.latency_s);
}

} // namespace

FabricFigures fabric_figures(const topologies::FabricSpec& spec, long long gpus) {
  FabricFigures f;
  const topologies::FabricGraph graph = topologies::build_fabric_graph(spec, gpus);
  const auto gpu = topologies::gpu_vertices(graph);
  topologies::RouteFinder routes(graph);
  f.gpus_per_node = std::max(1LL, topologies::gpus_per_node(graph));
  if (spec.kind == "star" || spec.kind == "nvlink-node")
    f.gpus_per_node = gpus; // one non-blocking switch
  const double eff = spec.efficiency;
  if (gpu.size() > 1)
    f.intra = route_figures(graph, routes, gpu[0], gpu[1], eff, spec.message_latency_s);
  f.inter = f.intra;
  if (static_cast<long long>(gpu.size()) > f.gpus_per_node) {
    f.inter = route_figures(graph, routes, gpu[0], gpu[gpu.size() - size_t(f.gpus_per_node)], eff,
                            spec.message_latency_s);
    if (spec.kind == "cluster" && !spec.cluster.nic_per_gpu)
      f.inter.bytes_per_s /= double(f.gpus_per_node);
  }
  f.nic_per_gpu = spec.kind == "cluster" && spec.cluster.nic_per_gpu;
  if (spec.kind == "cluster" && spec.cluster.oversubscription > 1) {
    f.leaf_gpus = spec.cluster.leaf_ports *
                  (spec.cluster.nic_per_gpu && !spec.cluster.rail_optimized ? 1 : f.gpus_per_node);
    f.oversubscription = spec.cluster.oversubscription;
  }
  if (f.gpus_per_node == 1 && gpu.size() > 1)
    f.intra = f.inter;
  return f;
}

StepEstimate estimate_step(const sim::Scenario& s, const FabricFigures& fabric) {
  const model::ParallelLayout& l = s.layout;
  const sim::StepWork work = sim::plan_step_work(s);
  const double peak = s.gpu.peak_flops_per_s;
  const double m = double(s.microbatches);
  const long long t = l.tensor, p = l.pipeline, v = l.virtual_stages, c = l.context, e = l.expert;
  const long long replicas = l.data * c; // gradients are reduced over data x context
  const double tokens = s.tokens_per_microbatch / double(c);
  const double activation_bytes = tokens * double(s.shape.hidden) * kActivationBytes;
  const LinkFigures tp_link = ring_link_for(fabric, stride_of(l, model::Axis::Tensor), t, s.channels);
  const LinkFigures cp_link = link_for(fabric, stride_of(l, model::Axis::Context), c);
  const long long data_stride = stride_of(l, c > 1 ? model::Axis::Context : model::Axis::Data);
  const LinkFigures dp_link = ring_link_for(fabric, data_stride, replicas, s.channels); // both engines run channels
  // EP groups: consecutive slots (context innermost), with their TP ranks when folded over TP.
  const LinkFigures ep_link = link_for(
      fabric, l.expert_tensor_degree() != t ? stride_of(l, model::Axis::Tensor) : data_stride, e);
  const LinkFigures pp_link = link_for(fabric, stride_of(l, model::Axis::Pipeline), p);
  StepEstimate est;

  // One TP all-reduce of a micro-batch's activations: 2 (t - 1) steps of M / t.
  const double tp_one_s = ring_allreduce_s(activation_bytes, t, tp_link);
  const model::ArchitectureSpec arch = sim::architecture_of(s);
  const double kv_bytes = c > 1 ? tokens * 2.0 * model::kv_width(arch) * kActivationBytes / double(t) : 0.0;
  const double ep_bytes =
      tokens / double(t) * double(std::max(1LL, arch.moe.top_k)) * double(s.shape.hidden) * kActivationBytes;
  auto pass = [&](const sim::PhaseCost& gemm, const sim::PhaseCost& elementwise, bool moe, double kv_blocks,
                  double all_reduces, double& tp_s, double& cp_s, double& ep_s) {
    const double compute_s = seconds(gemm, peak) + seconds(elementwise, peak);
    const double tp = all_reduces * tp_one_s;
    const double tp_exposed = l.tp_overlap ? std::max(0.0, tp - seconds(gemm, peak)) : tp;
    const double cp =
        c > 1
            ? kv_blocks * (double(c - 1) * kv_bytes / cp_link.bytes_per_s + double(c - 1) * cp_link.latency_s)
            : 0.0;
    const double cp_exposed = std::max(0.0, cp - compute_s);
    const double ep =
        moe && e > 1
            ? all_reduces * (double(e - 1) / double(e) * ep_bytes / ep_link.bytes_per_s + ep_link.latency_s)
            : 0.0;
    tp_s += tp_exposed;
    cp_s += cp_exposed;
    ep_s += ep;
    return compute_s + tp_exposed + cp_exposed + ep;
  };

  const double bytes_per_param = s.traffic.b_ar_bytes_per_param / 2.0 * s.training.gradient_traffic_scale();
  double worst_T = 0, worst_tail = 0;
  double worst_compute = 0, worst_tp = 0, worst_cp = 0, worst_ep = 0, worst_dp = 0, worst_opt = 0;
  for (long long stage = 0; stage < p; ++stage) {
    double T = 0, compute = 0, tp = 0, cp = 0, ep = 0, params = 0;
    double backward_s = 0, layers = 0; // one micro-batch's backward GEMMs and element-wise passes
    for (long long chunk = 0; chunk < v; ++chunk) {
      const model::LayerRange range = model::chunk_layers(l, stage, chunk);
      for (long long layer = range.first; layer < range.last; ++layer) {
        const sim::LayerWork& w = work.layer(layer);
        backward_s += seconds(w.bwd_gemm, peak) + seconds(w.bwd_elementwise, peak);
        layers += 1;
        const bool recomputed = model::layer_recomputed(s.training, layer);
        T += pass(w.fwd_gemm, w.fwd_elementwise, w.moe, 1, 2, tp, cp, ep);
        T += pass(w.bwd_gemm, w.bwd_elementwise, w.moe, recomputed ? 3 : 2, recomputed ? 4 : 2, tp, cp, ep);
        params += w.params - w.routed_expert_params +
                  w.routed_expert_params * double(t) / double(l.expert_tensor_degree()) / double(e);
      }
    }
    if (stage == 0) {
      T += tp_one_s; // the embedding's all-reduce
      tp += tp_one_s;
      params += work.embedding_params;
    }
    if (stage == p - 1) {
      for (const sim::PhaseCost* ph :
           {&work.head.fwd_gemm, &work.head.fwd_elementwise, &work.head.bwd_gemm, &work.head.bwd_elementwise})
        T += seconds(*ph, peak);
      params += work.head.params;
    }
    compute = T - tp - cp - ep;
    double dp = 0, opt = 0;
    if (l.model_parallel()) {
      dp = ring_allreduce_s(bytes_per_param * params, replicas, dp_link);
      // As pure data parallelism's estimate below: FSDP without a pipeline moves 3/2 of an
      // all-reduce's bytes; overlapped buckets hide behind a micro-batch's backward, all but one.
      if (p == 1 && s.training.sharding == model::Sharding::Zero3)
        dp *= 1.5;
      if (s.training.overlap_bucketed && layers > 0)
        dp = std::max(dp / layers, dp - backward_s);
      const long long updaters = s.training.sharding == model::Sharding::None ? 1 : replicas;
      opt = seconds(sim::optimizer_phase(s, params, updaters), peak);
    }
    if (T > worst_T) {
      worst_T = T;
      worst_compute = compute, worst_tp = tp, worst_cp = cp, worst_ep = ep;
    }
    if (dp + opt > worst_tail) {
      worst_tail = dp + opt;
      worst_dp = dp, worst_opt = opt;
    }
  }
  est.compute_s = m * worst_compute;
  est.tp_s = m * worst_tp;
  est.cp_s = m * worst_cp;
  est.ep_s = m * worst_ep;
  est.bubble_s = double(p - 1) / double(v) * worst_T;
  if (p > 1) {
    const double send_s = activation_bytes / double(t) / pp_link.bytes_per_s + pp_link.latency_s;
    est.pp_s = 2.0 * double(p * v - 1) * send_s;
  }
  if (l.model_parallel()) {
    est.dp_s = worst_dp;
    est.optimizer_s = worst_opt;
  } else {
    // Pure data parallelism: the whole model's gradients (ZeRO-3: gathers of the weights in the
    // forward and the backward, and a reduce-scatter of the gradients: 3/2 of an all-reduce's bytes).
    double comm = ring_allreduce_s(work.gradient_bytes, s.gpus, dp_link);
    if (s.training.sharding == model::Sharding::Zero3)
      comm *= 1.5;
    if (s.training.overlap_bucketed) {
      double backward = 0;
      for (long long layer = 0; layer < s.shape.layers; ++layer)
        backward +=
            seconds(work.layer(layer).bwd_gemm, peak) + seconds(work.layer(layer).bwd_elementwise, peak);
      comm = std::max(comm / double(s.shape.layers), comm - backward);
    }
    est.dp_s = comm;
    est.optimizer_s = seconds(work.optimizer, peak);
  }
  est.step_s =
      est.compute_s + est.tp_s + est.cp_s + est.ep_s + est.bubble_s + est.pp_s + est.dp_s + est.optimizer_s;
  const double tokens_per_gpu = s.tokens_per_microbatch * m * double(l.data) / double(s.gpus);
  est.tokens_per_s_per_gpu = tokens_per_gpu / est.step_s;
  return est;
}

} // namespace memwall::plan
