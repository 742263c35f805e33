#include "fabric_loader.hpp"

#include "cluster_fabric.hpp"
#include "fabric_routes.hpp"
#include "dragonfly_fabric.hpp"
#include "graph_fabric.hpp"
#include "star_fabric.hpp"
#include "torus_fabric.hpp"

#include <algorithm>

// Every count in a fabric file (ports, GPUs per node, torus sizes, dragonfly groups) is at most this,
// so products of three stay far inside 64-bit arithmetic.
static constexpr long long kMaxFabricCount = 131072;
#include <filesystem>
#include <sstream>
#include <stdexcept>

#ifndef MEMWALL_TOPOLOGIES_DIR
#define MEMWALL_TOPOLOGIES_DIR "topologies"
#endif

namespace memwall::topologies {

using model::Dimension;
using model::InputNode;

namespace {

// bandwidth, latency and pj_per_bit of `node` (a link mapping, or a fabric whose links are all alike).
LinkFigures read_link_figures(const InputNode& node, LinkFigures defaults, bool bandwidth_required) {
  LinkFigures f = defaults;
  if (auto c = node.optional_child("bandwidth"))
    f.bytes_per_s = c->as_positive_quantity(Dimension::Bandwidth);
  else if (bandwidth_required)
    node.fail("missing required key 'bandwidth'");
  if (auto c = node.optional_child("latency"))
    f.latency_s = c->as_non_negative_quantity(Dimension::Time);
  if (auto c = node.optional_child("pj_per_bit"))
    f.pj_per_bit = c->as_non_negative_number();
  return f;
}

// The keys every fabric kind takes, then the kind's own.
std::vector<std::string_view> fabric_keys(std::initializer_list<std::string_view> own) {
  std::vector<std::string_view> keys{
      "kind", "name", "source", "description", "efficiency", "message_latency", "reroute_delay"};
  keys.insert(keys.end(), own);
  return keys;
}

// `keys_checked`: the caller has checked the mapping's keys (a link that takes more than these).
LinkFigures parse_link(const InputNode& node, LinkFigures defaults, bool bandwidth_required, bool keys_checked = false) {
  if (!keys_checked)
    node.check_keys({"bandwidth", "latency", "pj_per_bit", "efficiency"});
  LinkFigures f = read_link_figures(node, defaults, bandwidth_required);
  if (auto e = node.optional_child("efficiency"))
    f.efficiency = e->as_fraction();
  return f;
}

// `sharp: true` and `sharp_efficiency` of `node` (an nvlink-node fabric, or a cluster's nvlink link).
double parse_nvls(const InputNode& node) {
  const auto sharp = node.optional_child("sharp");
  const bool on = sharp && sharp->as_bool();
  if (auto e = node.optional_child("sharp_efficiency")) {
    if (!on)
      e->fail("sharp_efficiency needs sharp: true beside it");
    const double f = e->as_fraction();
    if (f <= 0)
      e->fail("must be above 0 (the share of NVLink's data rate NVLS reaches)");
    return f;
  }
  return on ? kDefaultNvlsEfficiency : 0.0;
}

void parse_star(const InputNode& node, FabricSpec& spec) {
  if (spec.kind == "nvlink-node") {
    node.check_keys(fabric_keys({"bandwidth", "latency", "pj_per_bit", "gpu_links", "sharp", "sharp_efficiency"}));
    spec.nvls_efficiency = parse_nvls(node);
  } else {
    node.check_keys(fabric_keys({"bandwidth", "latency", "pj_per_bit", "gpu_links"}));
  }
  // The seed's star is idealised: no network energy unless asked for.
  const LinkFigures f =
      read_link_figures(node, {0, 0, spec.kind == "nvlink-node" ? kNvlinkPjPerBit : 0.0}, true);
  spec.link_bytes_per_s = f.bytes_per_s;
  spec.link_latency_s = f.latency_s;
  spec.pj_per_bit = f.pj_per_bit;
  if (auto c = node.optional_child("gpu_links")) {
    for (const auto& item : c->elements()) {
      item.check_keys({"gpu", "bandwidth", "latency"});
      const long long rank = item.child("gpu").as_non_negative_integer();
      LinkOverride o;
      if (auto b = item.optional_child("bandwidth"))
        o.bytes_per_s = b->as_positive_quantity(Dimension::Bandwidth);
      if (auto l = item.optional_child("latency"))
        o.latency_s = l->as_non_negative_quantity(Dimension::Time);
      if (!spec.gpu_links.emplace(rank, o).second)
        item.child("gpu").fail("GPU " + std::to_string(rank) + " is listed twice");
    }
  }
}

void parse_cluster(const InputNode& node, FabricSpec& spec) {
  node.check_keys(
      fabric_keys({"gpus_per_node", "nvlink", "nic", "nics", "uplink", "leaf_ports", "oversubscription",
                   "rail_optimized", "placement", "tiers", "pod_leaves", "core_oversubscription"}));
  ClusterParams& c = spec.cluster;
  c.gpus_per_node = node.child("gpus_per_node").as_count(kMaxFabricCount, "per fabric count");
  const InputNode nvlink = node.child("nvlink");
  nvlink.check_keys({"bandwidth", "latency", "pj_per_bit", "efficiency", "sharp", "sharp_efficiency"});
  spec.nvls_efficiency = parse_nvls(nvlink);
  c.nvlink = parse_link(nvlink, c.nvlink, true, true);
  c.nic = parse_link(node.child("nic"), c.nic, true);
  if (auto u = node.optional_child("uplink"))
    c.uplink = parse_link(*u, c.uplink, false);
  if (auto n = node.optional_child("nics"))
    c.nic_per_gpu = n->as_one_of({"per-gpu", "per-node"}) == "per-gpu";
  if (auto l = node.optional_child("leaf_ports"))
    c.leaf_ports = l->as_count(kMaxFabricCount, "per fabric count");
  if (auto o = node.optional_child("oversubscription")) {
    c.oversubscription = o->as_positive_number();
    if (c.oversubscription < 1 || c.oversubscription > double(c.leaf_ports))
      o->fail("must be between 1 (non-blocking) and leaf_ports");
  }
  if (auto r = node.optional_child("rail_optimized"))
    c.rail_optimized = r->as_bool();
  if (auto t = node.optional_child("tiers")) {
    c.tiers = static_cast<int>(t->as_positive_integer());
    if (c.tiers != 2 && c.tiers != 3)
      t->fail("a fat-tree here has 2 or 3 tiers");
  }
  if (auto p = node.optional_child("pod_leaves"))
    c.pod_leaves = p->as_count(kMaxFabricCount, "per fabric count");
  if (auto o = node.optional_child("core_oversubscription")) {
    c.core_oversubscription = o->as_positive_number();
    if (c.core_oversubscription < 1 || c.core_oversubscription > double(c.pod_leaves))
      o->fail("must be between 1 (non-blocking) and pod_leaves");
  }
  if (auto p = node.optional_child("placement"))
    c.round_robin_placement = p->as_one_of({"packed", "round-robin"}) == "round-robin";
}

void parse_torus(const InputNode& node, FabricSpec& spec) {
  node.check_keys(fabric_keys({"dims", "bandwidth", "latency", "pj_per_bit"}));
  const InputNode dims = node.child("dims");
  for (const auto& d : dims.elements())
    spec.torus.dims.push_back(d.as_count(kMaxFabricCount, "per fabric count"));
  if (spec.torus.dims.size() < 2 || spec.torus.dims.size() > 3)
    dims.fail("a torus has 2 or 3 dimensions");
  spec.torus.link = read_link_figures(node, spec.torus.link, true);
}

void parse_dragonfly(const InputNode& node, FabricSpec& spec) {
  node.check_keys(fabric_keys({"groups", "routers_per_group", "gpus_per_router", "global_links_per_router",
                               "gpu_link", "local_link", "global_link"}));
  DragonflyParams& d = spec.dragonfly;
  d.groups = node.child("groups").as_count(kMaxFabricCount, "per fabric count");
  d.routers_per_group = node.child("routers_per_group").as_count(kMaxFabricCount, "per fabric count");
  d.gpus_per_router = node.child("gpus_per_router").as_count(kMaxFabricCount, "per fabric count");
  if (auto h = node.optional_child("global_links_per_router"))
    d.global_links_per_router = h->as_count(kMaxFabricCount, "per fabric count");
  d.gpu_link = parse_link(node.child("gpu_link"), d.gpu_link, true);
  d.local_link = parse_link(node.child("local_link"), d.local_link, true);
  d.global_link = parse_link(node.child("global_link"), d.global_link, true);
}

void parse_graph(const InputNode& node, FabricSpec& spec) {
  node.check_keys(fabric_keys({"nodes", "links"}));
  for (const auto& n : node.child("nodes").elements()) {
    n.check_keys({"name", "kind"});
    GraphNode g{n.child("name").as_string(), n.child("kind").as_one_of({"gpu", "switch", "nic"})};
    spec.graph.nodes.push_back(g);
  }
  for (const auto& l : node.child("links").elements()) {
    l.check_keys({"a", "b", "bandwidth", "latency", "pj_per_bit"});
    GraphLink link{l.child("a").as_string(), l.child("b").as_string(), {}, l.line()};
    link.figures.bytes_per_s = l.child("bandwidth").as_positive_quantity(Dimension::Bandwidth);
    if (auto c = l.optional_child("latency"))
      link.figures.latency_s = c->as_non_negative_quantity(Dimension::Time);
    if (auto c = l.optional_child("pj_per_bit"))
      link.figures.pj_per_bit = c->as_non_negative_number();
    bool a_known = false, b_known = false;
    for (const auto& n : spec.graph.nodes) {
      a_known = a_known || n.name == link.a;
      b_known = b_known || n.name == link.b;
    }
    if (!a_known || !b_known)
      l.child(a_known ? "b" : "a").fail("unknown node '" + (a_known ? link.b : link.a) + "'");
    spec.graph.links.push_back(link);
  }
}

std::filesystem::path resolve_fabric_path(const InputNode& node) {
  namespace fs = std::filesystem;
  const std::string text = node.as_string();
  if (text.find('/') != std::string::npos || fs::path(text).extension() == ".yaml") {
    fs::path p = text;
    return p.is_relative() ? fs::path(node.file()).parent_path() / p : p;
  }
  const fs::path p = fs::path(fabric_catalog_dir()) / (text + ".yaml");
  if (!fs::exists(p)) {
    std::string known;
    for (const auto& entry : fs::directory_iterator(fabric_catalog_dir()))
      if (entry.path().extension() == ".yaml")
        known += (known.empty() ? "" : ", ") + entry.path().stem().string();
    node.fail("unknown fabric '" + text + "' (catalog " + fabric_catalog_dir() + " has: " + known + ")");
  }
  return p;
}

} // namespace

const std::string& fabric_catalog_dir() {
  static const std::string dir = MEMWALL_TOPOLOGIES_DIR;
  return dir;
}

FabricSpec parse_fabric(const InputNode& node) {
  if (node.is_scalar()) {
    const std::string text = node.as_string();
    if (node.key_path().empty()) // a whole file that is one text (e.g. /etc/passwd): never quoted back
      node.fail("not a fabric file: the file is text, not a mapping of keys (its contents are not shown)");
    if (text.empty() || text.size() > 255 || text.find('\n') != std::string::npos) // not a name or path
      node.fail("expected a fabric name, a fabric file or a mapping, got " + model::quoted(text));
    const auto path = resolve_fabric_path(node);
    // A fabric file may name another; a chain that comes back to a file it passed is a cycle.
    thread_local std::vector<std::string> chain;
    std::error_code ec;
    const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
    if (std::find(chain.begin(), chain.end(), canonical) != chain.end() || chain.size() >= 16) {
      std::string cycle;
      for (const auto& f : chain)
        cycle += f + " -> ";
      node.fail("fabric files refer to each other in a cycle (" + cycle + canonical + ")");
    }
    chain.push_back(canonical);
    try {
      FabricSpec spec = load_fabric_file(path.string());
      chain.pop_back();
      return spec;
    } catch (const model::InputError& e) {
      chain.pop_back();
      if (e.file() == path.string() && e.line() > 0)
        throw;
      if (e.reason().find("in a cycle") != std::string::npos)
        throw;
      node.fail(e.reason().rfind("cannot open", 0) == 0 || e.line() == 0 ? e.what() : e.reason());
    }
  }
  node.require_map();
  FabricSpec spec;
  spec.file = node.file();
  spec.line = node.line();
  spec.key = node.key_path().empty() ? "fabric" : node.key_path();
  const InputNode kind = node.child("kind");
  spec.kind = kind.as_string();
  if (auto n = node.optional_child("name"))
    spec.name = n->as_string();
  if (auto s = node.optional_child("source"))
    spec.source = s->as_string();
  // Per-GPU link overrides name a GPU's one link, which only stars have; elsewhere a GPU has several
  // links (NVLink, NIC, torus directions), each named, and a link event changes any of them.
  if (auto g = node.optional_child("gpu_links"); g && spec.kind != "star" && spec.kind != "nvlink-node")
    g->fail("gpu_links is for star and nvlink-node fabrics, where a GPU has one link; on a " + spec.kind +
            " fabric change a link by name from the start with cluster.link_events, e.g. [{at: 0s, link: "
            "gpu000003-nic, bandwidth: 12.5GB/s}] (memwall topo --dot lists the link names)");
  // In-network reduction needs NVSwitches that reduce: a cluster's NVLink or an NVLink domain.
  if (auto sharp = node.optional_child("sharp"); sharp && spec.kind != "nvlink-node")
    sharp->fail(spec.kind == "cluster"
                    ? "on a cluster NVLink SHARP is a property of its NVLink: nvlink: {..., sharp: true}"
                    : "a " + spec.kind +
                          " fabric has no NVSwitch to reduce in (sharp is for nvlink-node fabrics and a cluster's "
                          "nvlink)");
  if (spec.kind == "star" || spec.kind == "nvlink-node")
    parse_star(node, spec);
  else if (spec.kind == "cluster")
    parse_cluster(node, spec);
  else if (spec.kind == "torus")
    parse_torus(node, spec);
  else if (spec.kind == "dragonfly")
    parse_dragonfly(node, spec);
  else if (spec.kind == "graph")
    parse_graph(node, spec);
  else
    kind.fail("unknown fabric kind '" + spec.kind +
              "' (known: star, nvlink-node, cluster, torus, dragonfly, graph)");
  if (auto e = node.optional_child("efficiency"))
    spec.efficiency = e->as_fraction();
  if (auto m = node.optional_child("message_latency"))
    spec.message_latency_s = m->as_non_negative_quantity(Dimension::Time);
  if (auto d = node.optional_child("reroute_delay"))
    spec.reroute_delay_s = d->as_non_negative_quantity(Dimension::Time);
  return spec;
}

FabricSpec load_fabric_file(const std::string& path) {
  return parse_fabric(InputNode::load_file(path));
}

std::string describe_fabric(const FabricSpec& spec) {
  std::ostringstream out;
  out.precision(17);
  auto link = [&](const char* name, const LinkFigures& f) {
    out << ", " << name << ": {bandwidth: " << f.bytes_per_s << ", latency: " << f.latency_s
        << ", pj_per_bit: " << f.pj_per_bit;
    if (f.efficiency != 1)
      out << ", efficiency: " << f.efficiency;
    out << "}";
  };
  out << "{kind: " << spec.kind;
  if (!spec.name.empty())
    out << ", name: \"" << spec.name << "\"";
  if (spec.kind == "star" || spec.kind == "nvlink-node") {
    out << ", bandwidth: " << spec.link_bytes_per_s << ", latency: " << spec.link_latency_s
        << ", pj_per_bit: " << spec.pj_per_bit;
    if (!spec.gpu_links.empty()) {
      out << ", gpu_links: [";
      const char* sep = "";
      for (const auto& [rank, o] : spec.gpu_links) {
        out << sep << "{gpu: " << rank;
        if (o.bytes_per_s > 0)
          out << ", bandwidth: " << o.bytes_per_s;
        if (o.latency_s >= 0)
          out << ", latency: " << o.latency_s;
        out << "}";
        sep = ", ";
      }
      out << "]";
    }
  } else if (spec.kind == "cluster") {
    const ClusterParams& c = spec.cluster;
    out << ", gpus_per_node: " << c.gpus_per_node;
    link("nvlink", c.nvlink);
    link("nic", c.nic);
    LinkFigures uplink = c.uplink; // as built: bandwidth 0 means the NIC's (cluster_fabric.cpp)
    if (uplink.bytes_per_s <= 0) {
      uplink.bytes_per_s = c.nic.bytes_per_s;
      uplink.efficiency = c.nic.efficiency;
    }
    link("uplink", uplink);
    out << ", nics: " << (c.nic_per_gpu ? "per-gpu" : "per-node") << ", leaf_ports: " << c.leaf_ports
        << ", oversubscription: " << c.oversubscription
        << ", rail_optimized: " << (c.rail_optimized ? "true" : "false")
        << ", placement: " << (c.round_robin_placement ? "round-robin" : "packed") << ", tiers: " << c.tiers;
    if (c.tiers == 3)
      out << ", pod_leaves: " << c.pod_leaves << ", core_oversubscription: " << c.core_oversubscription;
  } else if (spec.kind == "torus") {
    out << ", dims: [";
    for (size_t i = 0; i < spec.torus.dims.size(); ++i)
      out << (i ? ", " : "") << spec.torus.dims[i];
    out << "], bandwidth: " << spec.torus.link.bytes_per_s << ", latency: " << spec.torus.link.latency_s
        << ", pj_per_bit: " << spec.torus.link.pj_per_bit;
  } else if (spec.kind == "dragonfly") {
    const DragonflyParams& d = spec.dragonfly;
    out << ", groups: " << d.groups << ", routers_per_group: " << d.routers_per_group
        << ", gpus_per_router: " << d.gpus_per_router
        << ", global_links_per_router: " << d.global_links_per_router;
    link("gpu_link", d.gpu_link);
    link("local_link", d.local_link);
    link("global_link", d.global_link);
  } else {
    out << ", nodes: " << spec.graph.nodes.size() << ", links: " << spec.graph.links.size();
  }
  if (spec.efficiency != 1 || spec.message_latency_s != 0)
    out << ", efficiency: " << spec.efficiency << ", message_latency: " << spec.message_latency_s;
  if (spec.reroute_delay_s != 0)
    out << ", reroute_delay: " << spec.reroute_delay_s;
  if (spec.nvls_efficiency > 0)
    out << ", nvls_efficiency: " << spec.nvls_efficiency;
  out << "}";
  return out.str();
}

FabricGraph build_fabric_graph(const FabricSpec& spec, long long gpus) {
  try {
    for (const auto& [rank, o] : spec.gpu_links)
      if (rank >= gpus)
        throw model::InputError(spec.file, spec.line, spec.key + ".gpu_links",
                                "GPU " + std::to_string(rank) + " does not exist (the cluster has " +
                                    std::to_string(gpus) + " GPUs)");
    FabricGraph graph;
    if (spec.kind == "cluster")
      graph = build_cluster_graph(spec, gpus);
    else if (spec.kind == "torus")
      graph = build_torus_graph(spec, gpus);
    else if (spec.kind == "graph")
      graph = build_explicit_graph(spec, gpus);
    else if (spec.kind == "dragonfly")
      graph = build_dragonfly_graph(spec, gpus);
    else
      graph = build_star_graph(spec, gpus);
    for (auto [e, end] = boost::edges(graph); e != end; ++e)
      graph[*e].bytes_per_s *= spec.efficiency;
    validate_fabric_graph(graph);
    number_edges(graph);
    return graph;
  } catch (const std::invalid_argument& e) {
    throw model::InputError(spec.file, spec.line, spec.key, e.what());
  }
}

} // namespace memwall::topologies
