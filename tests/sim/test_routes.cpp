// Batched routing (speed, issue 17): RouteFinder::routes() must give, hop for hop, what route() called
// on each request in turn gives, with the load balancing that depends on request order. Checked on
// every catalog fabric with the request orders the collectives make (a ring, halving-doubling
// partners, all pairs of a few GPUs, repeats) and with a pseudo-random order.
#include "collectives/choice.hpp"
#include "collectives/estimate.hpp"
#include "topologies/fabric_loader.hpp"
#include "topologies/fabric_routes.hpp"

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/transform_value_property_map.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <list>
#include <map>
#include <string>
#include <vector>

using namespace memwall;

namespace {

using Request = std::pair<topologies::FabricVertex, topologies::FabricVertex>;

std::vector<Request> requests(const std::vector<topologies::FabricVertex>& gpus) {
  const size_t n = gpus.size();
  std::vector<Request> r;
  for (size_t i = 0; i < n; ++i) // a ring
    r.emplace_back(gpus[i], gpus[(i + 1) % n]);
  for (size_t bit = 1; bit < n; bit *= 2) // halving-doubling partners
    for (size_t i = 0; i < n; ++i)
      if ((i ^ bit) < n)
        r.emplace_back(gpus[i], gpus[i ^ bit]);
  for (size_t a = 0; a < std::min<size_t>(n, 12); ++a) // all pairs of a few, both ways, twice
    for (size_t b = 0; b < std::min<size_t>(n, 12); ++b)
      if (a != b)
        r.emplace_back(gpus[a], gpus[b]);
  unsigned long long x = 12345; // and a scramble of far pairs
  for (size_t k = 0; k < 4 * n; ++k) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const size_t a = (x >> 33) % n, b = (x >> 13) % n;
    if (a != b)
      r.emplace_back(gpus[a], gpus[b]);
  }
  return r;
}

bool same(const std::vector<topologies::RouteHop>& a, const std::vector<topologies::RouteHop>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].edge != b[i].edge || a[i].forward != b[i].forward)
      return false;
  return true;
}

// The routing rule written plainly, as a reference: Boost's Dijkstra from the destination (seconds per
// byte), then from the source the out-edges onto a cheapest path (cost equal up to 1e-9, in Boost's
// order), taking the least-loaded link direction (the first of equals) and counting it.
class ReferenceRoutes {
public:
  explicit ReferenceRoutes(const topologies::FabricGraph& g) : graph_(g) {}
  std::vector<topologies::RouteHop> route(topologies::FabricVertex src, topologies::FabricVertex dst) {
    const size_t n = boost::num_vertices(graph_);
    std::vector<double> cost(n);
    boost::dijkstra_shortest_paths(
        graph_, dst,
        boost::weight_map(boost::make_transform_value_property_map(
                              [](const topologies::FabricLink& l) { return 1.0 / l.bytes_per_s; },
                              boost::get(boost::edge_bundle, graph_)))
            .distance_map(boost::make_iterator_property_map(cost.begin(), boost::get(boost::vertex_index, graph_))));
    std::vector<topologies::RouteHop> hops;
    for (topologies::FabricVertex u = src; u != dst;) {
      const topologies::RouteHop* best = nullptr;
      topologies::FabricVertex best_next = u;
      long long best_load = 0;
      std::vector<topologies::RouteHop> options;
      std::vector<topologies::FabricVertex> nexts;
      for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
        const topologies::FabricVertex w = boost::target(*e, graph_);
        const double through = cost[w] + 1.0 / graph_[*e].bytes_per_s;
        if (std::fabs(through - cost[u]) <= 1e-9 * std::max(through, cost[u]) && cost[w] < cost[u]) {
          options.push_back({*e, u < w});
          nexts.push_back(w);
        }
      }
      REQUIRE(!options.empty());
      for (size_t i = 0; i < options.size(); ++i) {
        const long long l = load_[{topologies::edge_index(graph_, options[i].edge), options[i].forward}];
        if (!best || l < best_load) {
          best = &options[i];
          best_next = nexts[i];
          best_load = l;
        }
      }
      ++load_[{topologies::edge_index(graph_, best->edge), best->forward}];
      hops.push_back(*best);
      u = best_next;
    }
    return hops;
  }

private:
  const topologies::FabricGraph& graph_;
  std::map<std::pair<size_t, bool>, long long> load_;
};

// A catalog fabric at its own size (dragonfly, torus) or `gpus`, kept alive in `graphs`: edge_index()
// caches one graph's edge table by its address.
const topologies::FabricGraph& catalog_graph(std::list<topologies::FabricGraph>& graphs, const std::string& name,
                                             long long gpus) {
  const topologies::FabricSpec spec = topologies::load_fabric_file(topologies::fabric_catalog_dir() + "/" + name + ".yaml");
  const long long n = name == "dragonfly-example" ? 72 : name == "tpu-v4-torus" ? 64 : gpus;
  return graphs.emplace_back(topologies::build_fabric_graph(spec, n));
}

// How many of the batched routes for the test's requests differ from the reference's.
size_t routes_unlike_reference(const topologies::FabricGraph& graph) {
  const std::vector<Request> reqs = requests(topologies::gpu_vertices(graph));
  ReferenceRoutes reference(graph);
  topologies::RouteFinder finder(graph);
  const auto got = finder.routes(reqs);
  size_t differ = 0;
  for (size_t i = 0; i < reqs.size(); ++i)
    differ += !same(got[i], reference.route(reqs[i].first, reqs[i].second));
  return differ;
}

} // namespace

TEST_CASE("routes equal the routing rule written plainly (Boost's Dijkstra), on every catalog fabric") {
  std::list<topologies::FabricGraph> graphs;
  for (const char* name : {"dgx-h100-ndr", "fat-tree-4to1", "dragonfly-example", "tpu-v4-torus", "gb200-nvl72",
                           "seed-ib", "fat-tree-2to1", "dgx-a100-hdr"}) {
    INFO(name);
    const topologies::FabricGraph& graph = catalog_graph(graphs, name, std::string(name) == "gb200-nvl72" ? 72 : 128);
    CHECK(routes_unlike_reference(graph) == 0);
  }
}

TEST_CASE("routes equal the plain rule on small hand-made graphs: GPUs linked directly, NICs, double links") {
  using topologies::NodeKind;
  std::list<topologies::FabricGraph> graphs;
  auto gpu = [](topologies::FabricGraph& g, long long rank) {
    return boost::add_vertex(topologies::FabricNode{std::to_string(rank) + "g", NodeKind::Gpu, rank, rank, 0}, g);
  };
  auto node = [](topologies::FabricGraph& g, const std::string& name, NodeKind kind) {
    return boost::add_vertex(topologies::FabricNode{name, kind}, g);
  };
  auto link = [](topologies::FabricGraph& g, topologies::FabricVertex a, topologies::FabricVertex b, double gbs) {
    boost::add_edge(a, b, topologies::FabricLink{std::to_string(boost::num_edges(g)) + "l", gbs * 1e9, 1e-6, 0, "graph"},
                    g);
  };
  { // two GPUs and one link: both of degree 1
    auto& g = graphs.emplace_back();
    link(g, gpu(g, 0), gpu(g, 1), 50);
  }
  { // GPUs behind their own NICs on two switches joined twice, one GPU with two links to its NIC
    auto& g = graphs.emplace_back();
    const auto s0 = node(g, "s0", NodeKind::Switch), s1 = node(g, "s1", NodeKind::Switch);
    link(g, s0, s1, 100);
    link(g, s0, s1, 100);
    for (long long r = 0; r < 6; ++r) {
      const auto v = gpu(g, r), nic = node(g, std::to_string(r) + "nic", NodeKind::Nic);
      link(g, v, nic, 400);
      if (r == 2)
        link(g, v, nic, 400);
      link(g, nic, r < 3 ? s0 : s1, 50);
    }
  }
  { // GPUs on a star whose hub also joins a second star through two links of unequal speed
    auto& g = graphs.emplace_back();
    const auto a = node(g, "a", NodeKind::Switch), b = node(g, "b", NodeKind::Switch);
    link(g, a, b, 25);
    link(g, a, b, 50);
    for (long long r = 0; r < 8; ++r)
      link(g, gpu(g, r), r % 2 ? a : b, 25);
  }
  for (const auto& graph : graphs) {
    topologies::validate_fabric_graph(graph);
    CHECK(routes_unlike_reference(graph) == 0);
  }
}

TEST_CASE("batched routes equal routes requested one by one, on every catalog fabric") {
  std::list<topologies::FabricGraph> graphs;
  for (const char* name : {"dgx-h100-ndr", "dgx-a100-hdr", "fat-tree-2to1", "fat-tree-4to1", "dragonfly-example",
                           "tpu-v4-torus", "gb200-nvl72", "seed-ib", "seed-nvlink"}) {
    INFO(name);
    const topologies::FabricGraph& graph = catalog_graph(graphs, name, std::string(name) == "gb200-nvl72" ? 144 : 512);
    const std::vector<Request> reqs = requests(topologies::gpu_vertices(graph));
    topologies::RouteFinder one_by_one(graph), batched(graph);
    std::vector<std::vector<topologies::RouteHop>> expected;
    for (const auto& [src, dst] : reqs)
      expected.push_back(one_by_one.route(src, dst));
    const auto got = batched.routes(reqs);
    REQUIRE(got.size() == expected.size());
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i)
      differ += !same(got[i], expected[i]);
    CHECK(differ == 0);
    // And the loads they leave behave alike: the next route, one by one, is the same after either.
    const auto gv = topologies::gpu_vertices(graph);
    CHECK(same(one_by_one.route(gv[1], gv.back()), batched.route(gv[1], gv.back())));
    // Flat, as link directions (2 x edge index + direction), the same routes: from a new finder, and
    // from a finder already used, walked on loads of its own that start empty.
    topologies::RouteFinder flat(graph);
    std::vector<long long> own_loads(batched.load_slots(), 0);
    for (const topologies::FlatRoutes& got_flat :
         {flat.flat_routes(reqs), batched.flat_routes(reqs, own_loads)}) {
      REQUIRE(got_flat.size() == expected.size());
      size_t flat_differ = 0;
      for (size_t i = 0; i < expected.size(); ++i) {
        std::vector<uint32_t> want;
        for (const auto& hop : expected[i])
          want.push_back(uint32_t(2 * topologies::edge_index(graph, hop.edge) + hop.forward));
        flat_differ += want != std::vector<uint32_t>(got_flat.slots.begin() + long(got_flat.begin[i]),
                                                     got_flat.slots.begin() + long(got_flat.begin[i + 1]));
      }
      CHECK(flat_differ == 0);
    }
  }
}

// A batch whose destinations are each reached from another leaf only (the other half of the ranks):
// a GPU's routes then all pass its leaf, whose paths from the far leaves an earlier destination on
// the same leaf already walked (the delegated next hops, RouteFinder::prepare). Each destination must
// still get the leaf's own hop to it.
TEST_CASE("batched routes to GPUs reached only from far leaves equal routes requested one by one") {
  std::list<topologies::FabricGraph> graphs;
  for (const char* name : {"fat-tree-2to1", "fat-tree-4to1", "dgx-h100-ndr", "dgx-a100-hdr", "dragonfly-example"}) {
    INFO(name);
    const topologies::FabricGraph& graph = catalog_graph(graphs, name, 512);
    const auto gv = topologies::gpu_vertices(graph);
    std::vector<Request> reqs;
    for (size_t i = 0; i < gv.size(); ++i)
      reqs.emplace_back(gv[i], gv[(i + gv.size() / 2) % gv.size()]);
    topologies::RouteFinder one_by_one(graph), batched(graph);
    const auto got = batched.routes(reqs);
    size_t differ = 0;
    for (size_t i = 0; i < reqs.size(); ++i)
      differ += !same(got[i], one_by_one.route(reqs[i].first, reqs[i].second));
    CHECK(differ == 0);
  }
}

TEST_CASE("auto's estimates with one finder shared by the candidates equal estimates each with its own") {
  // 256 GPUs: one thread; 4,096: the ring order and the largest candidate's walk on a second thread.
  for (const auto& [fabric, gpus] :
       {std::pair<const char*, long long>{"fat-tree-2to1", 256}, {"dgx-h100-ndr", 4096}}) {
    INFO(fabric << " x " << gpus);
    const topologies::FabricSpec spec =
        topologies::load_fabric_file(topologies::fabric_catalog_dir() + "/" + fabric + ".yaml");
    const topologies::FabricGraph graph = topologies::build_fabric_graph(spec, gpus);
    const auto choice = collectives::choose_collective("auto", "topology", graph, 1e9);
    REQUIRE(choice.estimates_s.size() == 4);
    for (const auto& [name, t] : choice.estimates_s) {
      INFO(name);
      const auto alone = collectives::choose_collective(name, "topology", graph, 1e9);
      CHECK(collectives::estimate_seconds(alone.schedule, graph) == t); // a fresh finder: bit for bit
    }
  }
}
