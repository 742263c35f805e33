// A fabric as the user describes it (scenario `cluster.fabric`, inline or a fabric file). One struct
// holds every kind's parameters; the builders read the ones of their kind.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace memwall::topologies {

// Default network energy per bit and per link crossed, by link class (estimates; see README):
//  NVLink (SerDes + NVSwitch port, ~5 pJ/bit), a NIC link (NIC + switch port at 400 Gb/s class,
//  ~30 pJ/bit), a switch-to-switch link (two switch ports + optics, ~15 pJ/bit), torus links (~5 pJ/bit).
inline constexpr double kNvlinkPjPerBit = 5.0;
inline constexpr double kNicPjPerBit = 30.0;
inline constexpr double kSwitchPjPerBit = 15.0;
inline constexpr double kTorusPjPerBit = 5.0;

// NCCL's nvlsEfficiency for Hopper (src/graph/tuning.cc at 5067397c), the default share of NVLink's
// data rate an NVLS collective reaches where a fabric declares `sharp: true`.
inline constexpr double kDefaultNvlsEfficiency = 0.85;

struct LinkOverride {
  double bytes_per_s = 0; // 0: keep the fabric's
  double latency_s = -1;  // < 0: keep the fabric's
};

struct LinkFigures {
  double bytes_per_s = 0; // per direction, the line rate
  double latency_s = 0;
  double pj_per_bit = 0;
  // Data per byte on the wire (packet headers, flow control): a cluster's NVLink and NIC links carry
  // bytes_per_s x efficiency of data. The catalog's values come from NCCL's own link speeds (topologies/*.yaml).
  double efficiency = 1;
};

// `cluster`: nodes of G GPUs, each node an NVLink domain (one NVSwitch), plus NICs (one per GPU or
// one per node) into a fat-tree: leaf switches of `leaf_ports` down-ports, each with
// leaf_ports / oversubscription up-links of the NIC bandwidth, one to each spine. With three tiers,
// leaves form pods of `pod_leaves`; each pod has its own spines (aggregation switches), and spine s
// of every pod has pod_leaves / core_oversubscription up-links into core plane s.
struct ClusterParams {
  long long gpus_per_node = 8;
  LinkFigures nvlink{0, 0, kNvlinkPjPerBit};
  LinkFigures nic{0, 0, kNicPjPerBit};
  LinkFigures uplink{0, 0, kSwitchPjPerBit}; // bandwidth 0: the NIC bandwidth
  bool nic_per_gpu = true;
  long long leaf_ports = 32;
  double oversubscription = 1;
  bool rail_optimized = false;        // leaf = (rail, group of nodes) instead of consecutive NICs
  int tiers = 2;                      // 3: leaves grouped into pods whose spines (aggregation) meet in a core
  long long pod_leaves = 8;           // three tiers: leaves per pod
  double core_oversubscription = 1;   // three tiers: aggregation down-links over up-links
  bool round_robin_placement = false; // node i on leaf i mod leaves instead of packed
};

struct TorusParams {
  std::vector<long long> dims; // 2 or 3 sizes; their product is the GPU count
  LinkFigures link{0, 0, kTorusPjPerBit};
};

// `dragonfly`: groups of routers, all-to-all inside a group (local links), one global link between
// every pair of groups; GPUs hang off the routers (the GPUs of one router form a "server").
struct DragonflyParams {
  long long groups = 0, routers_per_group = 0, gpus_per_router = 0, global_links_per_router = 1;
  LinkFigures gpu_link{0, 0, kNicPjPerBit};
  LinkFigures local_link{0, 0, kSwitchPjPerBit};
  LinkFigures global_link{0, 0, kSwitchPjPerBit};
};

struct GraphNode {
  std::string name;
  std::string kind; // gpu | switch | nic
};
struct GraphLink {
  std::string a, b;
  LinkFigures figures;
  int line = 0;
};
struct GraphParams {
  std::vector<GraphNode> nodes; // GPU ranks follow the order of gpu nodes
  std::vector<GraphLink> links;
};

struct FabricSpec {
  std::string kind = "star"; // star | nvlink-node | cluster | torus | dragonfly | graph
  // star and nvlink-node: each GPU has one full-duplex link to a non-blocking switch.
  double link_bytes_per_s = 0;                 // per direction
  double link_latency_s = 0;                   // per link, per direction
  double pj_per_bit = 0;                       // network energy per bit per link crossed
  std::map<long long, LinkOverride> gpu_links; // per-GPU link overrides (rank -> figures), star only
  ClusterParams cluster;
  TorusParams torus;
  DragonflyParams dragonfly;
  GraphParams graph;
  double efficiency = 1;        // achieved fraction of every link's bandwidth (bus bandwidth / line rate)
  double message_latency_s = 0; // software latency per message (per algorithm step), on top of links'
  double reroute_delay_s = 0;   // time the fabric takes to route around a link that went down
  // NVLink SHARP (NVLS): the NVSwitches reduce and multicast (H100 and later NVLink domains). 0: the
  // fabric has none; otherwise the share of NVLink's data rate NVLS's multimem loads and stores reach
  // (NCCL's nvlsEfficiency, src/graph/tuning.cc at 5067397c: Hopper 0.85, Blackwell 0.74). Declared
  // as `nvlink: {sharp: true}` (cluster) or `sharp: true` (nvlink-node); see collectives/schedule.hpp.
  double nvls_efficiency = 0;
  std::string name;             // for fabric files
  std::string source;           // where the figures come from
  std::string file;             // where it was described, for messages
  int line = 0;
  std::string key = "cluster.fabric"; // its key path there ("fabric" in a fabric file)
};

} // namespace memwall::topologies
