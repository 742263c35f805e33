#include "cluster_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace memwall::topologies {

FabricGraph build_cluster_graph(const FabricSpec& spec, long long gpus) {
  const ClusterParams& c = spec.cluster;
  const long long g = c.gpus_per_node;
  if (gpus % g != 0)
    throw std::invalid_argument("gpus_per_node (" + std::to_string(g) + ") does not divide the GPU count (" +
                                std::to_string(gpus) + ")");
  const long long nodes = gpus / g;
  const long long endpoints = c.nic_per_gpu ? gpus : nodes; // NICs
  // Rail-optimized: each rail has its own leaves (a group of leaf_ports nodes per leaf), so a rail
  // never shares a leaf with another, even when the nodes do not fill the last group.
  const bool by_rail = c.rail_optimized && c.nic_per_gpu;
  const long long leaves = by_rail ? g * ((nodes + c.leaf_ports - 1) / c.leaf_ports)
                                   : (endpoints + c.leaf_ports - 1) / c.leaf_ports;
  const long long uplinks = std::max(1LL, static_cast<long long>(std::llround(double(c.leaf_ports) / c.oversubscription)));
  // An up-link without its own bandwidth is the NIC's kind of link: its rate and its efficiency.
  const bool own_rate = c.uplink.bytes_per_s > 0;
  const LinkFigures up{own_rate ? c.uplink.bytes_per_s : c.nic.bytes_per_s, c.uplink.latency_s, c.uplink.pj_per_bit,
                       own_rate ? c.uplink.efficiency : c.nic.efficiency};
  FabricGraph graph;
  std::vector<FabricVertex> nvswitch(static_cast<size_t>(nodes)), leaf(static_cast<size_t>(leaves)), spine;
  for (long long n = 0; n < nodes; ++n)
    nvswitch[size_t(n)] = boost::add_vertex(FabricNode{"node" + std::to_string(n) + "-nvswitch", NodeKind::Switch}, graph);
  for (long long l = 0; l < leaves; ++l)
    leaf[size_t(l)] = boost::add_vertex(FabricNode{"leaf" + std::to_string(l), NodeKind::Switch}, graph);
  const bool three_tiers = c.tiers == 3 && leaves > c.pod_leaves;
  const long long pods = three_tiers ? (leaves + c.pod_leaves - 1) / c.pod_leaves : 1;
  if (leaves > 1) // spines: one set per pod (three tiers) or one for all leaves
    for (long long p = 0; p < pods; ++p)
      for (long long s = 0; s < uplinks; ++s)
        spine.push_back(boost::add_vertex(
            FabricNode{(three_tiers ? "pod" + std::to_string(p) + "-" : std::string()) + "spine" + std::to_string(s),
                       NodeKind::Switch},
            graph));
  auto add_link = [&](FabricVertex a, FabricVertex b, const std::string& name, const LinkFigures& f,
                      const char* link_class) {
    boost::add_edge(a, b, FabricLink{name, f.bytes_per_s * f.efficiency, f.latency_s, f.pj_per_bit, link_class}, graph);
  };
  // Which leaf a NIC plugs into: NICs fill leaves in order (packed), node by node round-robin over
  // the leaves, or rail by rail (rail-optimized: the same local rank of consecutive nodes share a leaf).
  auto leaf_of = [&](long long node, long long local) -> long long {
    if (c.round_robin_placement)
      return node % leaves;
    if (by_rail)
      return local * ((nodes + c.leaf_ports - 1) / c.leaf_ports) + node / c.leaf_ports;
    const long long nic = c.nic_per_gpu ? node * g + local : node;
    return nic / c.leaf_ports;
  };
  for (long long rank = 0; rank < gpus; ++rank) {
    const long long node = rank / g, local = rank % g;
    const std::string name = gpu_host_name(rank);
    const FabricVertex gpu = boost::add_vertex(FabricNode{name, NodeKind::Gpu, rank, node, local}, graph);
    add_link(gpu, nvswitch[size_t(node)], name + "-nvlink", c.nvlink, "nvlink");
    if (c.nic_per_gpu)
      add_link(gpu, leaf[size_t(leaf_of(node, local))], name + "-nic", c.nic, "nic");
  }
  if (!c.nic_per_gpu)
    for (long long n = 0; n < nodes; ++n)
      add_link(nvswitch[size_t(n)], leaf[size_t(leaf_of(n, 0))], "node" + std::to_string(n) + "-nic", c.nic, "nic");
  for (long long l = 0; l < leaves; ++l) {
    const long long pod = three_tiers ? l / c.pod_leaves : 0;
    for (long long s = 0; s < (leaves > 1 ? uplinks : 0); ++s)
      add_link(leaf[size_t(l)], spine[size_t(pod * uplinks + s)], "leaf" + std::to_string(l) + "-spine" + std::to_string(s),
               up, "switch");
  }
  if (three_tiers) { // core plane s joins spine s of every pod
    const long long core_uplinks =
        std::max(1LL, static_cast<long long>(std::llround(double(c.pod_leaves) / c.core_oversubscription)));
    for (long long s = 0; s < uplinks; ++s)
      for (long long k = 0; k < core_uplinks; ++k) {
        const FabricVertex core = boost::add_vertex(
            FabricNode{"core" + std::to_string(s) + "-" + std::to_string(k), NodeKind::Switch}, graph);
        for (long long p = 0; p < pods; ++p)
          add_link(spine[size_t(p * uplinks + s)], core,
                   "pod" + std::to_string(p) + "-spine" + std::to_string(s) + "-core" + std::to_string(k), up, "switch");
      }
  }
  return graph;
}

} // namespace memwall::topologies
