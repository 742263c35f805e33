// The fabric as a Boost.Graph graph: GPUs, switches and NICs as vertices, full-duplex links as edges.
// Validated and queried here; turned into a SimGrid platform by sim/platform_builder.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <string>
#include <vector>

namespace memwall::topologies {

enum class NodeKind { Gpu, Switch, Nic };

struct FabricNode {
  std::string name;
  NodeKind kind = NodeKind::Gpu;
  long long gpu_rank = -1;   // for GPUs: 0..N-1
  long long node = -1;       // for GPUs: the server (NVLink domain) it sits in
  long long local_rank = -1; // for GPUs: its index within the server
};

struct FabricLink {
  std::string name;
  double bytes_per_s = 0; // per direction
  double latency_s = 0;
  double pj_per_bit = 0;
  std::string link_class; // star, nvlink, nic, switch, torus, graph
  // The edge's position in boost::edges() order, for per-edge tables (edge_index). Set by
  // number_edges when the graph is built; a graph made by hand gets it on first use. Kept in the
  // edge itself: a cache keyed by addresses confused two graphs built one after the other at the same
  // addresses (plan over two fabrics: unordered_map::at).
  mutable size_t index = kUnnumbered;
  static constexpr size_t kUnnumbered = static_cast<size_t>(-1);
};

using FabricGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, FabricNode, FabricLink>;
using FabricVertex = boost::graph_traits<FabricGraph>::vertex_descriptor;

// Host name of GPU `rank`, zero-padded so that sorting by name gives rank order.
std::string gpu_host_name(long long rank);

// GPU vertices in rank order.
std::vector<FabricVertex> gpu_vertices(const FabricGraph& graph);

// GPUs per server when every server holds the same number (1 when GPUs stand alone).
long long gpus_per_node(const FabricGraph& graph);

// Throws std::invalid_argument with the reason when the graph is not a usable fabric
// (disconnected, non-positive bandwidth, negative latency, duplicate names, GPU ranks not 0..N-1).
void validate_fabric_graph(const FabricGraph& graph);

} // namespace memwall::topologies
