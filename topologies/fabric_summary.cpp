#include "fabric_summary.hpp"

#include <boost/graph/push_relabel_max_flow.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>

namespace memwall::topologies {

namespace {

// Max flow between GPUs of rank < N/2 and the others, each link a pair of arcs of its bandwidth.
// Integer capacities: push-relabel checks flow conservation exactly (an assertion in Debug builds),
// which floating-point sums break. Bandwidths are counted in units small enough to be exact for real
// links and large enough that no sum of them overflows 64 bits.
double rank_halves_max_flow(const FabricGraph& graph) {
  using Capacity = long long;
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, Capacity,
                      boost::property<boost::edge_residual_capacity_t, Capacity,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  long double total_bytes_per_s = 0;
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    total_bytes_per_s += 2.0L * graph[*e].bytes_per_s;
  const long double unit = std::max(1.0L, total_bytes_per_s / 1e17L); // bytes/s per capacity unit
  auto units = [&](double bytes_per_s) { return static_cast<Capacity>(std::llround(bytes_per_s / unit)); };

  const size_t n = boost::num_vertices(graph);
  FlowGraph flow(n + 2);
  const auto source = n, sink = n + 1;
  auto capacity = boost::get(boost::edge_capacity, flow);
  auto reverse = boost::get(boost::edge_reverse, flow);
  auto add_arc = [&](size_t a, size_t b, Capacity c) {
    auto e = boost::add_edge(a, b, flow).first;
    auto r = boost::add_edge(b, a, flow).first;
    capacity[e] = c;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  std::vector<Capacity> injection(n, 0); // what a vertex's links can carry at most
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const Capacity c = units(graph[*e].bytes_per_s);
    add_arc(boost::source(*e, graph), boost::target(*e, graph), c);
    add_arc(boost::target(*e, graph), boost::source(*e, graph), c);
    injection[boost::source(*e, graph)] += c;
    injection[boost::target(*e, graph)] += c;
  }
  // A GPU's arc from the source (to the sink) never limits the flow: its links carry no more.
  const auto gpus = gpu_vertices(graph);
  for (size_t r = 0; r < gpus.size(); ++r) {
    if (r < gpus.size() / 2)
      add_arc(source, gpus[r], injection[gpus[r]]);
    else
      add_arc(gpus[r], sink, injection[gpus[r]]);
  }
  return static_cast<double>(boost::push_relabel_max_flow(flow, source, sink) * unit);
}

// The GPUs whose searches decide the diameter: one of each set of twins (GPUs with the same
// neighbours, e.g. a server's GPUs on one NVSwitch and one leaf). A twin is as far as its sibling from
// every other vertex (a shortest path leaves either through the same neighbours) and 2 hops from the
// sibling, which the sibling's own search already counts; so the others' searches add nothing.
std::vector<FabricVertex> one_gpu_of_each_twin_set(const FabricGraph& graph) {
  std::map<std::vector<FabricVertex>, FabricVertex> first_with;
  std::vector<FabricVertex> out;
  for (FabricVertex g : gpu_vertices(graph)) {
    std::vector<FabricVertex> neighbours;
    for (auto [e, end] = boost::out_edges(g, graph); e != end; ++e)
      neighbours.push_back(boost::target(*e, graph));
    std::sort(neighbours.begin(), neighbours.end());
    neighbours.erase(std::unique(neighbours.begin(), neighbours.end()), neighbours.end());
    if (neighbours.empty() || first_with.emplace(std::move(neighbours), g).second)
      out.push_back(g); // a GPU without links is its own search (it reaches nothing: not connected)
  }
  return out;
}

// The most hops between two GPUs: breadth-first searches from one GPU of each set of twins (above),
// 256 at a time, each vertex holding one bit per search (reached or not) in four 64-bit words, so a
// level of 256 searches is one pass over the links. A search per GPU one by one cost N x (V + E): the
// 16k-GPU summary's largest part after the routes; on a fat-tree whose servers' GPUs are twins, twins
// cut the searches by 8. 256 lanes rather than 64: a quarter of the passes over the links (8 s of a
// rail-optimised fabric at 131,072 GPUs, whose GPUs have no twins, at 64).
int gpu_diameter_hops(const FabricGraph& graph) {
  constexpr size_t kLanes = 256;
  using Bits = std::array<uint64_t, kLanes / 64>;
  auto any_bit = [](const Bits& b) { return (b[0] | b[1] | b[2] | b[3]) != 0; };
  const auto gpus = gpu_vertices(graph);
  const auto sources = one_gpu_of_each_twin_set(graph);
  const size_t n = boost::num_vertices(graph);
  std::vector<char> is_gpu(n, 0);
  for (auto g : gpus)
    is_gpu[g] = 1;
  std::vector<size_t> begin{0};
  std::vector<FabricVertex> next_to;
  for (FabricVertex u = 0; u < n; ++u) {
    for (auto [e, end] = boost::out_edges(u, graph); e != end; ++e)
      next_to.push_back(boost::target(*e, graph));
    begin.push_back(next_to.size());
  }
  int diameter = 0;
  std::vector<Bits> seen(n), frontier(n), reached(n);
  for (size_t first = 0; first < sources.size(); first += kLanes) {
    std::fill(seen.begin(), seen.end(), Bits{});
    std::fill(frontier.begin(), frontier.end(), Bits{});
    Bits all{};
    for (size_t i = first; i < std::min(sources.size(), first + kLanes); ++i) {
      const size_t lane = i - first;
      const uint64_t bit = uint64_t(1) << (lane % 64);
      seen[sources[i]][lane / 64] |= bit;
      frontier[sources[i]][lane / 64] |= bit;
      all[lane / 64] |= bit;
    }
    for (int level = 1;; ++level) {
      bool any = false;
      for (FabricVertex u = 0; u < n; ++u) {
        Bits r{};
        for (size_t k = begin[u]; k < begin[u + 1]; ++k)
          for (size_t w = 0; w < r.size(); ++w)
            r[w] |= frontier[next_to[k]][w];
        for (size_t w = 0; w < r.size(); ++w)
          r[w] &= ~seen[u][w];
        reached[u] = r;
        if (any_bit(r)) {
          any = true;
          if (is_gpu[u])
            diameter = std::max(diameter, level);
        }
      }
      if (!any)
        break;
      for (FabricVertex u = 0; u < n; ++u)
        for (size_t w = 0; w < seen[u].size(); ++w)
          seen[u][w] |= reached[u][w];
      frontier.swap(reached);
    }
    for (auto g : gpus) // every GPU reached by every search (the fabric is connected when validated)
      for (size_t w = 0; w < all.size(); ++w)
        if ((seen[g][w] & all[w]) != all[w])
          return std::numeric_limits<int>::max();
  }
  return diameter;
}

} // namespace

FabricSummary summarise_fabric(const FabricGraph& graph) {
  FabricSummary s;
  for (auto [v, end] = boost::vertices(graph); v != end; ++v) {
    s.gpus += graph[*v].kind == NodeKind::Gpu;
    s.switches += graph[*v].kind == NodeKind::Switch;
    s.nics += graph[*v].kind == NodeKind::Nic;
  }
  s.links = static_cast<long long>(boost::num_edges(graph));
  s.gpus_per_node = gpus_per_node(graph);
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    s.total_link_bytes_per_s += graph[*e].bytes_per_s;
  const auto gpus = gpu_vertices(graph);
  s.min_injection_bytes_per_s = std::numeric_limits<double>::max();
  for (auto g : gpus) {
    double injection = 0;
    for (auto [e, end] = boost::out_edges(g, graph); e != end; ++e)
      injection += graph[*e].bytes_per_s;
    s.min_injection_bytes_per_s = std::min(s.min_injection_bytes_per_s, injection);
    s.max_injection_bytes_per_s = std::max(s.max_injection_bytes_per_s, injection);
  }
  s.diameter_hops = gpu_diameter_hops(graph);
  s.bisection_bound_bytes_per_s = gpus.size() > 1 ? rank_halves_max_flow(graph) : 0.0;
  return s;
}

void print_fabric_summary(std::ostream& out, const FabricSummary& s) {
  char line[256];
  auto put = [&](const char* label, const std::string& value) {
    std::snprintf(line, sizeof line, "  %-34s %s\n", label, value.c_str());
    out << line;
  };
  auto gbs = [](double bytes_per_s) {
    char b[64];
    std::snprintf(b, sizeof b, "%.1f GB/s", bytes_per_s / 1e9);
    return std::string(b);
  };
  put("GPUs", std::to_string(s.gpus));
  put("GPUs per server (NVLink domain)", std::to_string(s.gpus_per_node));
  put("switches", std::to_string(s.switches));
  put("links (full duplex)", std::to_string(s.links));
  put("diameter (GPU to GPU)", std::to_string(s.diameter_hops) + " hops");
  put("injection bandwidth per GPU", gbs(s.min_injection_bytes_per_s) +
                                         (s.max_injection_bytes_per_s > s.min_injection_bytes_per_s
                                              ? " .. " + gbs(s.max_injection_bytes_per_s)
                                              : std::string()) +
                                         " per direction");
  put("bisection bound (rank halves)", gbs(s.bisection_bound_bytes_per_s) + " per direction");
  put("per GPU across the bisection", gbs(s.gpus > 1 ? s.bisection_bound_bytes_per_s / double(s.gpus / 2) : 0.0));
}

void write_dot(std::ostream& out, const FabricGraph& graph) {
  out << "graph fabric {\n  node [fontsize=9];\n";
  for (auto [v, end] = boost::vertices(graph); v != end; ++v) {
    const FabricNode& n = graph[*v];
    out << "  v" << *v << " [label=\"" << n.name << "\", shape="
        << (n.kind == NodeKind::Gpu ? "box" : n.kind == NodeKind::Nic ? "diamond" : "ellipse") << "];\n";
  }
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const FabricLink& l = graph[*e];
    char label[64];
    std::snprintf(label, sizeof label, "%.0f GB/s", l.bytes_per_s / 1e9);
    out << "  v" << boost::source(*e, graph) << " -- v" << boost::target(*e, graph) << " [label=\"" << label
        << "\", tooltip=\"" << l.name << " (" << l.link_class << ")\"];\n";
  }
  out << "}\n";
}

} // namespace memwall::topologies
