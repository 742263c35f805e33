// Every collective on every regular fabric, against alpha-beta formulas derived here from the
// algorithm and the fabric (D = gradient bytes, B = link bandwidth per direction), within 1%.
// Also: contention on an oversubscribed fat-tree, a shared link split between flows, and the
// hierarchical all-reduce beating the flat ring on a two-tier cluster (and `auto` picking it).
#include "collectives/schedule.hpp"
#include "sim/engine/isolated_run.hpp"
#include "test_support.hpp"

#include <cmath>
#include <map>

using namespace memwall;
using memwall::test::gpu;
using memwall::test::rel;

namespace {

sim::Scenario job(long long gpus, const std::string& collective) {
  sim::Scenario s;
  s.name = collective;
  s.file = "test";
  s.gpu = gpu("H100-SXM");
  s.shape = {1024, 2, 0, 4096}; // P = 12 d^2 L + 2 V d: a 58 MB bf16 gradient
  s.tokens_per_microbatch = 256;
  s.gpus = gpus;
  s.collective = collective;
  return s;
}

double gradient(const sim::Scenario& s) {
  return 2.0 * model::total_params(s.shape);
}

double allreduce_s(const sim::Scenario& s) {
  return sim::run_isolated(s)["t_allreduce_s"].get<double>();
}

sim::Scenario on_star(long long n, double b, const std::string& collective,
                      const std::string& kind = "star") {
  sim::Scenario s = job(n, collective);
  s.fabric.kind = kind;
  s.fabric.link_bytes_per_s = b;
  return s;
}

// Two-tier cluster: G GPUs per server on NVLink (b_nv), one NIC per GPU (b_nic), non-blocking.
sim::Scenario on_cluster(long long n, long long g, double b_nv, double b_nic, const std::string& collective) {
  sim::Scenario s = job(n, collective);
  s.fabric.kind = "cluster";
  s.fabric.cluster.gpus_per_node = g;
  s.fabric.cluster.nvlink = {b_nv, 0, 0};
  s.fabric.cluster.nic = {b_nic, 0, 0};
  s.fabric.cluster.uplink = {0, 0, 0};
  s.fabric.cluster.leaf_ports = 8;
  return s;
}

// Double binary tree on a star: per round, the busiest GPU link carries (children or parents over
// both trees) x D/2; a reduce round and a broadcast round.
double double_tree_on_star(long long n, double d, double b) {
  std::vector<double> down(size_t(n), 0), up(size_t(n), 0);
  for (int tree = 0; tree < 2; ++tree)
    for (long long child = 1; child < n; ++child) {
      const long long parent = (child - 1) / 2;
      const long long c = tree ? n - 1 - child : child, p = tree ? n - 1 - parent : parent;
      up[size_t(c)] += d / 2;   // reduce: child -> parent leaves over the child's up-link
      down[size_t(p)] += d / 2; // and arrives over the parent's down-link
    }
  double busiest = 0;
  for (long long r = 0; r < n; ++r)
    busiest = std::max({busiest, up[size_t(r)], down[size_t(r)]});
  return 2.0 * busiest / b;
}

} // namespace

TEST_CASE("star: ring, halving-doubling and hierarchical (G = 1) all take 2 (N-1)/N D / B") {
  for (const char* c : {"ring", "halving-doubling", "hierarchical"}) {
    INFO(c);
    const sim::Scenario s = on_star(16, 20e9, c);
    CHECK(allreduce_s(s) == rel(2.0 * 15.0 / 16.0 * gradient(s) / 20e9, 0.01));
  }
}

TEST_CASE("star: double binary tree, busiest link over two rounds") {
  const sim::Scenario s = on_star(10, 20e9, "tree");
  CHECK(allreduce_s(s) == rel(double_tree_on_star(10, gradient(s), 20e9), 0.01));
}

TEST_CASE("nvlink-node: every collective within the NVSwitch domain") {
  const double b = 450e9;
  for (const char* c : {"ring", "hierarchical", "halving-doubling"}) {
    INFO(c);
    const sim::Scenario s = on_star(8, b, c, "nvlink-node");
    CHECK(allreduce_s(s) == rel(2.0 * 7.0 / 8.0 * gradient(s) / b, 0.01));
  }
  const sim::Scenario t = on_star(8, b, "tree", "nvlink-node");
  CHECK(allreduce_s(t) == rel(double_tree_on_star(8, gradient(t), b), 0.01));
}

TEST_CASE("halving-doubling pays 2 log2(N) route latencies, each two links long") {
  sim::Scenario s = on_star(8, 20e9, "halving-doubling");
  const double base = allreduce_s(s);
  s.fabric.link_latency_s = 3e-6;
  CHECK(allreduce_s(s) - base == rel(2.0 * 3.0 * 2.0 * 3e-6, 0.01));
}

TEST_CASE("cluster: ring, hierarchical and halving-doubling on two tiers") {
  const long long n = 16, g = 4, m = 4;
  const double b_nv = 300e9, b_nic = 25e9;
  const double d = gradient(on_cluster(n, g, b_nv, b_nic, "ring"));
  // Ring in rank order: intra-server hops on NVLink, one NIC hop per server boundary; the NIC is
  // the bottleneck of the pipelined ring.
  CHECK(allreduce_s(on_cluster(n, g, b_nv, b_nic, "ring")) == rel(2.0 * (n - 1) / n * d / b_nic, 0.01));
  // Hierarchical: intra-server reduce-scatter and all-gather on NVLink, inter-server ring per rail on
  // 1/G of the data, each rail on its own NICs.
  const double hier = 2.0 * (g - 1) / g * d / b_nv + 2.0 * (m - 1) / m * (d / g) / b_nic;
  CHECK(allreduce_s(on_cluster(n, g, b_nv, b_nic, "hierarchical")) == rel(hier, 0.01));
  // Halving-doubling, nearest partner first: distances 1, 2 inside a server, 4, 8 across servers.
  const double hd = 2.0 * ((d / 2 + d / 4) / b_nv + (d / 8 + d / 16) / b_nic);
  CHECK(allreduce_s(on_cluster(n, g, b_nv, b_nic, "halving-doubling")) == rel(hd, 0.01));
}

TEST_CASE("torus 4 x 4: a topology-aware ring uses one link per hop") {
  sim::Scenario s = job(16, "ring");
  s.fabric.kind = "torus";
  s.fabric.torus.dims = {4, 4};
  s.fabric.torus.link = {40e9, 0, 0};
  CHECK(allreduce_s(s) == rel(2.0 * 15.0 / 16.0 * gradient(s) / 40e9, 0.01));
}

TEST_CASE("torus 2 x 2 x 2 (a cube): ring, hierarchical and halving-doubling use one link per hop") {
  // Halving-doubling's partners r xor 1, 2, 4 are the cube's neighbours along z, y, x; the ring
  // follows a Gray-code cycle; hierarchical with one GPU per server is the ring.
  for (const char* c : {"ring", "hierarchical", "halving-doubling"}) {
    INFO(c);
    sim::Scenario s = job(8, c);
    s.fabric.kind = "torus";
    s.fabric.torus.dims = {2, 2, 2};
    s.fabric.torus.link = {40e9, 0, 0};
    CHECK(allreduce_s(s) == rel(2.0 * 7.0 / 8.0 * gradient(s) / 40e9, 0.01));
  }
}

// The double binary tree's flows: (child, parent) pairs of both trees, D/2 each.
std::vector<std::pair<long long, long long>> tree_flows(long long n) {
  std::vector<std::pair<long long, long long>> flows;
  for (int tree = 0; tree < 2; ++tree)
    for (long long child = 1; child < n; ++child) {
      const long long parent = (child - 1) / 2;
      flows.emplace_back(tree ? n - 1 - child : child, tree ? n - 1 - parent : parent);
    }
  return flows;
}

TEST_CASE("cluster: NCCL's tree, chains inside servers, a double binary tree across them") {
  // 4 servers of 4 GPUs, one non-blocking leaf. Four rounds, one after the other, each paced by its
  // busiest link direction. Chains: each tree's half runs along the server (local 3 -> 0 for tree 0,
  // 0 -> 3 for tree 1), so a middle GPU sends both halves (the gradient) over its NVLink: G / b_nv.
  // Across servers (heap order 0 <- 1, 0 <- 2, 1 <- 3; tree 1 over reversed servers 3 <- 2, 3 <- 1,
  // 2 <- 0), the root heads (server 0's local 0, server 3's local 3) receive two halves through their
  // NIC: G / b_nic, and again to broadcast. The chain broadcast does not wait for the whole tree:
  // each GPU moves to its next round when its own messages are done, so locals 1 and 2 exchange
  // their halves while the heads are still in the tree; a head's chain neighbour then sends it one
  // half alone, at the full NVLink rate: G / (2 b_nv). T = G / b_nv + 2 G / b_nic + G / (2 b_nv).
  const long long n = 16, g = 4;
  const double b_nv = 300e9, b_nic = 25e9;
  sim::Scenario s = on_cluster(n, g, b_nv, b_nic, "tree");
  s.fabric.cluster.leaf_ports = 16;
  const double grad = gradient(s);
  CHECK(allreduce_s(s) == rel(grad / b_nv + 2.0 * grad / b_nic + grad / (2.0 * b_nv), 0.002));
}

TEST_CASE("torus 7 x 1 (a ring of 7): double binary tree over shortest ring paths") {
  const long long n = 7;
  const double b = 40e9;
  sim::Scenario s = job(n, "tree");
  s.fabric.kind = "torus";
  s.fabric.torus.dims = {7, 1};
  s.fabric.torus.link = {b, 0, 0};
  const double half = gradient(s) / 2;
  // Link i joins GPUs i and i+1 (mod 7); on an odd ring every shortest path is unique.
  std::map<std::pair<long long, int>, double> load; // (link, direction: +1 clockwise / -1)
  for (auto [child, parent] : tree_flows(n)) {
    const long long forward = ((parent - child) % n + n) % n;
    const int dir = forward <= n / 2 ? 1 : -1;
    for (long long at = child; at != parent; at = ((at + dir) % n + n) % n)
      load[{dir > 0 ? at : ((at - 1) % n + n) % n, dir}] += half;
  }
  double busiest = 0;
  for (const auto& [key, bytes] : load)
    busiest = std::max(busiest, bytes / b);
  CHECK(allreduce_s(s) == rel(2.0 * busiest, 0.01));
}

TEST_CASE("dragonfly of two groups: ring and hierarchical across the global link") {
  // Two groups of one router each, 4 GPUs per router: GPUs 0-3 and 4-7 meet only over the global link.
  const double b = 40e9, b_global = 20e9;
  auto on_dragonfly = [&](const char* collective) {
    sim::Scenario s = job(8, collective);
    s.ring_order = "rank";
    s.fabric.kind = "dragonfly";
    s.fabric.dragonfly = {2, 1, 4, 1, {b, 0, 0}, {b, 0, 0}, {b_global, 0, 0}};
    return s;
  };
  const double d = gradient(on_dragonfly("ring"));
  // Ring: hops 3 -> 4 and 7 -> 0 cross the global link in opposite directions, alone: the slower link paces
  // it.
  CHECK(allreduce_s(on_dragonfly("ring")) == rel(2.0 * 7.0 / 8.0 * d / b_global, 0.01));
  // Hierarchical: a ring of 4 inside each router on the GPU links, then the 4 rails' inter-group
  // rings of D/4 share the global link (B_global / 4 each way).
  const double hier = 2.0 * 3.0 / 4.0 * d / b + 2.0 * 0.5 * (d / 4.0) / (b_global / 4.0);
  CHECK(allreduce_s(on_dragonfly("hierarchical")) == rel(hier, 0.01));
}

TEST_CASE("three-tier fat-tree: core oversubscription halves the cross-pod rounds") {
  // One GPU per leaf, pods of 2 leaves (one spine each), 4 pods. Halving-doubling's distance-1 round
  // stays in a pod; distances 2 and 4 cross pods: both GPUs of a pod send through their spine's core
  // up-links, 2 of them non-blocking (one flow each), 1 at 2:1 (two flows share it).
  const double b = 25e9;
  auto fat_tree = [&](double core_oversubscription) {
    sim::Scenario s = on_cluster(8, 1, 300e9, b, "halving-doubling");
    s.fabric.cluster.leaf_ports = 1;
    s.fabric.cluster.tiers = 3;
    s.fabric.cluster.pod_leaves = 2;
    s.fabric.cluster.core_oversubscription = core_oversubscription;
    return s;
  };
  const double d = gradient(fat_tree(1));
  CHECK(allreduce_s(fat_tree(1)) == rel(2.0 * (d / 2 + d / 4 + d / 8) / b, 0.01));
  CHECK(allreduce_s(fat_tree(2)) == rel(2.0 * (d / 2 + 2 * d / 4 + 2 * d / 8) / b, 0.01));
}

TEST_CASE("oversubscribed fat-tree k:1: a flat ring whose hops all cross the spine slows k-fold") {
  // One GPU per server, 4 NICs per leaf, servers dealt round-robin to the 4 leaves: in rank order
  // every ring hop leaves its leaf. A leaf's 4 flows share its 4/k up-links: B/k each.
  const long long n = 16;
  const double b = 25e9;
  auto fat_tree = [&](double k, const std::string& order) {
    sim::Scenario s = on_cluster(n, 1, 300e9, b, "ring");
    s.fabric.cluster.leaf_ports = 4;
    s.fabric.cluster.oversubscription = k;
    s.fabric.cluster.round_robin_placement = true;
    s.ring_order = order;
    return allreduce_s(s);
  };
  const double d = gradient(on_cluster(n, 1, 300e9, b, "ring"));
  const double blocking_free = 2.0 * (n - 1) / n * d / b;
  CHECK(fat_tree(1, "rank") == rel(blocking_free, 0.01));
  CHECK(fat_tree(2, "rank") == rel(2.0 * blocking_free, 0.01));
  CHECK(fat_tree(4, "rank") == rel(4.0 * blocking_free, 0.01));
  // A topology-aware ring stays inside leaves but for 4 hops, one per up-link: no slowdown.
  CHECK(fat_tree(4, "topology") == rel(blocking_free, 0.01));
}

TEST_CASE("two flows crossing one link in the same direction split it") {
  // a, b on switch s; c, d on switch t; ranks a c b d: ring hops a->c and b->d both cross s->t.
  sim::Scenario s = job(4, "ring");
  s.ring_order = "rank";
  s.fabric.kind = "graph";
  s.fabric.graph.nodes = {{"a", "gpu"}, {"c", "gpu"},    {"b", "gpu"},
                          {"d", "gpu"}, {"s", "switch"}, {"t", "switch"}};
  const topologies::LinkFigures f{10e9, 0, 0};
  s.fabric.graph.links = {{"a", "s", f}, {"b", "s", f}, {"c", "t", f}, {"d", "t", f}, {"s", "t", f}};
  CHECK(allreduce_s(s) == rel(2.0 * 3.0 / 4.0 * gradient(s) / (10e9 / 2), 0.01));
}

TEST_CASE("two-tier cluster: hierarchical beats the flat ring by the derived ratio; auto picks it") {
  const long long n = 24, g = 8, m = 3; // not a power of two: halving-doubling does not apply
  const double b_nv = 450e9, b_nic = 50e9;
  sim::Scenario ring = on_cluster(n, g, b_nv, b_nic, "ring");
  const double d = gradient(ring);
  const double t_ring = 2.0 * (n - 1) / n * d / b_nic;
  const double t_hier = 2.0 * (g - 1) / g * d / b_nv + 2.0 * (m - 1) / m * (d / g) / b_nic;
  const double ring_s = allreduce_s(ring);
  const double hier_s = allreduce_s(on_cluster(n, g, b_nv, b_nic, "hierarchical"));
  CHECK(ring_s / hier_s == rel(t_ring / t_hier, 0.01));
  CHECK(t_ring / t_hier > 5.0);
  const auto chosen = sim::run_isolated(on_cluster(n, g, b_nv, b_nic, "auto"));
  CHECK(chosen["collective"].get<std::string>() == "hierarchical");
  CHECK(chosen["t_allreduce_s"].get<double>() == rel(hier_s, 1e-9));
}

TEST_CASE("link events: a bandwidth drop half-way through the first ring round") {
  sim::Scenario s = on_star(8, 20e9, "ring");
  const auto base = sim::run_isolated(s);
  const double d = gradient(s), x = 7.0 / 8.0 * d / 20e9; // one ring round at full speed
  const double t_compute = base["t_compute_s"].get<double>();
  s.link_events = {{t_compute + x / 2, "gpu000000-link", 10e9, false}};
  // GPU 0's link carries a flow each way; at half speed the rest of round 1 takes x, round 2 takes 2x:
  // the ring, paced by that link, ends after 0.5x + x + 2x.
  CHECK(sim::run_isolated(s)["t_allreduce_s"].get<double>() == rel(3.5 * x, 0.01));
}

namespace {

// One GPU per server, 2 NICs per leaf with 2 up-links (non-blocking), servers dealt round-robin
// to 4 leaves, ring in rank order: every hop crosses the spine.
sim::Scenario spine_ring(std::vector<sim::Scenario::LinkEvent> events) {
  sim::Scenario s = on_cluster(8, 1, 300e9, 25e9, "ring");
  s.fabric.cluster.leaf_ports = 2;
  s.fabric.cluster.round_robin_placement = true;
  s.ring_order = "rank";
  s.link_events = std::move(events);
  return s;
}

} // namespace

TEST_CASE("link events: a spine link down from the start is routed around") {
  // With leaf0-spine0 down, leaf 0's two outgoing and two incoming flows share its last up-link:
  // B/2 each, the ring runs at half speed.
  const double d = gradient(spine_ring({})), b = 25e9;
  CHECK(allreduce_s(spine_ring({})) == rel(2.0 * 7.0 / 8.0 * d / b, 0.01));
  CHECK(allreduce_s(spine_ring({{0.0, "leaf0-spine0", 0.0, true}})) ==
        rel(2.0 * 2.0 * 7.0 / 8.0 * d / b, 0.01));
}

TEST_CASE("link events: a spine link going down mid-run is routed around, the rest resent") {
  // The ring's reduce-scatter and all-gather phases each move 7/8 D per GPU at B: x = 7/8 D / B each.
  // The link fails half-way through the reduce-scatter: the flows on it resend their remaining half
  // over leaf 0's other up-link, which leaf 0's other flows already use, so every leaf-0 flow runs at
  // B/2 from then on: 0.5x + 0.5x B / (B/2) + x B / (B/2) = 3.5x (4x if down from the start, 2x if never).
  const double d = gradient(spine_ring({})), b = 25e9, x = 7.0 / 8.0 * d / b;
  const double t_compute = sim::run_isolated(spine_ring({}))["t_compute_s"].get<double>();
  const auto faulty = sim::run_isolated(spine_ring({{t_compute + 0.5 * x, "leaf0-spine0", 0.0, true}}));
  CHECK(faulty["t_allreduce_s"].get<double>() == rel(3.5 * x, 0.01));
  // Resent bytes are not counted twice: every GPU still sends 2 (N-1)/N D.
  CHECK(faulty["bytes_sent_per_gpu"].get<double>() == rel(2.0 * 7.0 / 8.0 * d, 1e-6));
  // With a re-routing delay of x, the broken flows wait: leaf 0's other flows finish the phase alone
  // at B (at 1x), the broken rests resume at 0.5x + x and take 0.5x alone: the phase ends at 2x,
  // the all-gather at B/2 takes 2x more: 4x.
  sim::Scenario slow = spine_ring({{t_compute + 0.5 * x, "leaf0-spine0", 0.0, true}});
  slow.fabric.reroute_delay_s = x;
  CHECK(sim::run_isolated(slow)["t_allreduce_s"].get<double>() == rel(4.0 * x, 0.01));
}

TEST_CASE("link events: the repair routes around the failed link and around the routes that stay") {
  // a, b on switch s; c, d on switch t; s and t joined through three spines p0, p1, p2; ring a c b d.
  // Balanced routes: a->c and c->b over p0, b->d and d->a over p1, p2 spare. When s--p0 fails,
  // a->c and c->b move to p2 (p1 carries the routes that stay, in the same directions): every flow
  // still has its links to itself, and the all-reduce takes 2 (3/4) D / B as without the failure.
  sim::Scenario s = job(4, "ring");
  s.ring_order = "rank";
  s.fabric.kind = "graph";
  s.fabric.graph.nodes = {{"a", "gpu"},     {"c", "gpu"},     {"b", "gpu"},
                          {"d", "gpu"},     {"s", "switch"},  {"t", "switch"},
                          {"p0", "switch"}, {"p1", "switch"}, {"p2", "switch"}};
  const topologies::LinkFigures f{10e9, 0, 0};
  s.fabric.graph.links = {{"a", "s", f},  {"b", "s", f},  {"c", "t", f},  {"d", "t", f},  {"s", "p0", f},
                          {"p0", "t", f}, {"s", "p1", f}, {"p1", "t", f}, {"s", "p2", f}, {"p2", "t", f}};
  const double x = 3.0 / 4.0 * gradient(s) / 10e9;
  CHECK(allreduce_s(s) == rel(2.0 * x, 0.01));
  const double t_compute = sim::run_isolated(s)["t_compute_s"].get<double>();
  s.link_events = {{t_compute + 0.5 * x, "s--p0", 0.0, true}};
  CHECK(allreduce_s(s) == rel(2.0 * x, 0.01));
}

TEST_CASE("link events: a link going down mid-run on a fabric without another path stalls, with a report") {
  sim::Scenario s = on_star(4, 20e9, "ring");
  s.link_events = {{0.001, "gpu000002-link", 0.0, true}};
  CHECK_THROWS_WITH(sim::run_isolated(s),
                    Catch::Contains("stalled") && Catch::Contains("gpu000002-link down"));
  // The same on a cluster: a GPU's only NIC.
  sim::Scenario c = spine_ring({});
  c.link_events = {{0.001, "gpu000003-nic", 0.0, true}};
  CHECK_THROWS_WITH(sim::run_isolated(c), Catch::Contains("stalled") && Catch::Contains("no other path"));
}
