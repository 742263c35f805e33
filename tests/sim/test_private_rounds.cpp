// Private rounds (speed, issue 17): rounds whose messages can never share a link are timed without
// SimGrid messages. Two checks: the rule that finds them, on hand-made routes whose answer follows
// from the definition; and whole runs, timed that way against the reference that sends every message
// through SimGrid (MEMWALL_SIMULATE_MESSAGES=1), which must agree on every number they print.
#include "collectives/link_privacy.hpp"
#include "sim/engine/isolated_run.hpp"
#include "sim/engine/platform_builder.hpp"
#include "sim/scenario_text.hpp"
#include "test_support.hpp"

#include <cstdlib>
#include <string>

using namespace memwall;
using collectives::Flow;
using collectives::Round;
using collectives::RouteLinks;
using collectives::Schedule;

namespace {

Schedule schedule_of(const std::vector<std::vector<Flow>>& rounds) {
  Schedule s;
  for (const auto& flows : rounds)
    s.rounds.push_back(Round{"r", flows, 0});
  return s;
}

// Every (src, dst) between n GPUs on a star: GPU g sends over link 2g + 1 and receives over 2g.
RouteLinks star_routes(long long n) {
  RouteLinks routes;
  for (long long a = 0; a < n; ++a)
    for (long long b = 0; b < n; ++b)
      if (a != b)
        routes[{a, b}] = {uint64_t(2 * a + 1), uint64_t(2 * b)};
  return routes;
}

} // namespace

TEST_CASE("private rounds: a ring on a star never shares a link") {
  // Round 0: g -> g + 1; round 1: the same again. Each up link carries its GPU's one send per round.
  std::vector<Flow> ring;
  for (long long g = 0; g < 4; ++g)
    ring.push_back({g, (g + 1) % 4, 1.0});
  const auto result = collectives::private_rounds(schedule_of({ring, ring}), star_routes(4));
  CHECK(result == std::vector<bool>{true, true});
}

TEST_CASE("private rounds: two messages of one round into one GPU share its down link") {
  // A tree's reduce: 1 -> 0 and 2 -> 0 at once cross link 0 together; then 0 -> 1 and 0 -> 2 (the
  // broadcast) share 0's up link (link 1) in one round as well.
  const Schedule s = schedule_of({{{1, 0, 1.0}, {2, 0, 1.0}}, {{0, 1, 1.0}, {0, 2, 1.0}}, {{1, 2, 1.0}}});
  const auto result = collectives::private_rounds(s, star_routes(3));
  CHECK(result == std::vector<bool>{false, false, true});
}

TEST_CASE("private rounds: a link crossed by different senders and receivers in different rounds is shared") {
  // Two servers joined by one link (id 100 one way, 101 back): round 0 stays inside the servers,
  // round 1 sends 0 -> 2, round 2 sends 1 -> 3 over the same inter-server link: GPUs in different
  // rounds may be on it at once (a fast GPU a round ahead), so rounds 1 and 2 are not private.
  RouteLinks routes;
  routes[{0, 1}] = {1, 2};
  routes[{2, 3}] = {5, 6};
  routes[{0, 2}] = {1, 100, 4};
  routes[{1, 3}] = {3, 100, 6};
  const Schedule s = schedule_of({{{0, 1, 1.0}, {2, 3, 1.0}}, {{0, 2, 1.0}}, {{1, 3, 1.0}}});
  CHECK(collectives::private_rounds(s, routes) == std::vector<bool>{true, false, false});
  // The same inter-server link used by one sender in both rounds stays private to it.
  routes[{0, 3}] = {1, 100, 6};
  const Schedule one_sender = schedule_of({{{0, 1, 1.0}, {2, 3, 1.0}}, {{0, 2, 1.0}}, {{0, 3, 1.0}}});
  CHECK(collectives::private_rounds(one_sender, routes) == std::vector<bool>{true, true, true});
}

namespace {

// Every number of the run's JSON record, with rounds timed directly and with every message simulated.
void check_same_run(const std::string& yaml) {
  const sim::Scenario s = test::scenario_from_text(yaml, "private-rounds.yaml");
  ::unsetenv("MEMWALL_SIMULATE_MESSAGES");
  nlohmann::json timed = sim::run_isolated(s);
  ::setenv("MEMWALL_SIMULATE_MESSAGES", "1", 1);
  nlohmann::json simulated = sim::run_isolated(s);
  ::unsetenv("MEMWALL_SIMULATE_MESSAGES");
  for (auto* record : {&timed, &simulated})
    for (const char* key : {"sim_wall_s", "activities_per_s"})
      record->erase(key);
  REQUIRE(simulated.contains("step_time_s"));
  // The breakdown's members add the same spans cut at the same instants, but the two ways reach
  // those instants by different sums: equal to the last bits, not bit for bit.
  for (const auto& [key, value] : simulated.at("breakdown").items())
    CHECK(timed.at("breakdown").at(key).get<double>() ==
          Approx(value.get<double>()).epsilon(1e-12).margin(1e-15));
  timed.erase("breakdown");
  simulated.erase("breakdown");
  CHECK(timed.dump() == simulated.dump());
}

const std::string kModel = R"(gpu: H100-SXM
model: {hidden: 1024, layers: 4, seq_len: 1024, vocab: 32000}
batch: {tokens_per_microbatch: 2048, microbatches: 2}
allow_oom: true
)";

} // namespace

// Links of unequal speed (gpu_links) make messages of one round end at different times, so that a
// message's start (the later of its ends' arrivals) is not always its second end's arrival.
TEST_CASE("private rounds: runs on a star equal the message-by-message runs") {
  SECTION(
      "ring, DDP buckets overlapped, stragglers (GPUs arrive at their rounds at different times), 3 steps") {
    check_same_run(kModel + R"(steps: 3
training: {overlap: bucketed, bucket: 4MB}
cluster:
  gpus: 8
  collective: ring
  fabric: {kind: star, bandwidth: 25GB/s, latency: 3us, gpu_links: [{gpu: 1, bandwidth: 5GB/s}]}
  stragglers: [{gpu: 3, speed: 0.7}, {gpu: 6, speed: 0.9}]
)");
  }
  SECTION("halving-doubling with per-message software latency (each round's extra latency)") {
    check_same_run(kModel + R"(cluster:
  gpus: 16
  collective: halving-doubling
  fabric: {kind: star, bandwidth: 50GB/s, latency: 2us, message_latency: 5us,
           gpu_links: [{gpu: 2, bandwidth: 10GB/s}, {gpu: 9, bandwidth: 20GB/s, latency: 9us}]}
  speed_distribution: {kind: uniform, half_width: 0.1, seed: 7}
)");
  }
  SECTION("halving-doubling, one slow link and one slow GPU: a message's second end may arrive first") {
    // GPU 0's messages take 10x longer (23 ms a round), GPU 5 reaches the all-reduce about 7 ms late:
    // GPUs 4-7 reach round 2 long before GPUs 0-3, but only once GPU 5 is there, after 0-3's arrivals
    // were known. A message must start at the later of its ends' arrivals, not at the second known.
    check_same_run(kModel + R"(cluster:
  gpus: 8
  collective: halving-doubling
  fabric: {kind: star, bandwidth: 50GB/s, latency: 1us, gpu_links: [{gpu: 0, bandwidth: 5GB/s}]}
  stragglers: [{gpu: 5, speed: 0.3}]
)");
  }
  SECTION("ZeRO-3 with FSDP prefetch: reduce-scatter and all-gather halves of the schedule, 2 steps") {
    check_same_run(kModel + R"(steps: 2
training: {sharding: zero3, overlap: bucketed}
cluster:
  gpus: 8
  collective: ring
  fabric: {kind: star, bandwidth: 25GB/s, latency: 1us}
  stragglers: [{gpu: 5, speed: 0.8}]
)");
  }
  SECTION("double tree: rounds that share links stay simulated") {
    check_same_run(kModel + R"(training: {sharding: zero2}
cluster:
  gpus: 12
  collective: tree
  fabric: {kind: star, bandwidth: 25GB/s, latency: 1us}
)");
  }
}

TEST_CASE("private rounds: runs on two-tier clusters equal the message-by-message runs") {
  SECTION("hierarchical on an oversubscribed fat-tree: NVLink rounds timed, shared uplinks simulated") {
    check_same_run(kModel + R"(training: {overlap: bucketed, bucket: 8MB}
cluster:
  gpus: 32
  collective: hierarchical
  fabric: {kind: cluster, gpus_per_node: 4, nvlink: {bandwidth: 300GB/s, latency: 1us},
           nic: {bandwidth: 50GB/s, latency: 2us}, leaf_ports: 8, oversubscription: 4}
  stragglers: [{gpu: 9, speed: 0.75}]
)");
  }
  SECTION("ring with NCCL's channels (8 per server) on a rail-optimized fat-tree, buckets overlapped") {
    check_same_run(kModel + R"(training: {overlap: bucketed, bucket: 8MB}
cluster:
  gpus: 32
  collective: ring
  nccl: {channels: 8}
  fabric: {kind: cluster, gpus_per_node: 8, nvlink: {bandwidth: 300GB/s, latency: 1us},
           nic: {bandwidth: 50GB/s, latency: 2us}, leaf_ports: 8, rail_optimized: true}
  stragglers: [{gpu: 12, speed: 0.8}]
)");
  }
  SECTION("ring with 3 channels over 3 servers (no rail-aligned ring: rounds partly shared)") {
    check_same_run(kModel + R"(cluster:
  gpus: 12
  collective: ring
  nccl: {channels: 3}
  fabric: {kind: cluster, gpus_per_node: 4, nvlink: {bandwidth: 300GB/s, latency: 1us},
           nic: {bandwidth: 50GB/s, latency: 2us}, leaf_ports: 8}
)");
  }
  SECTION("halving-doubling on a rail-optimized fat-tree") {
    check_same_run(kModel + R"(cluster:
  gpus: 32
  collective: halving-doubling
  fabric: {kind: cluster, gpus_per_node: 8, nvlink: {bandwidth: 300GB/s, latency: 1us},
           nic: {bandwidth: 50GB/s, latency: 2us}, leaf_ports: 8, rail_optimized: true}
  speed_distribution: {kind: normal, stddev: 0.05, seed: 3}
)");
  }
}

TEST_CASE("collective auto runs bit for bit as the algorithm it picks (its routes handed to the platform)") {
  // `auto` routes every candidate's flows for its estimates and hands the chosen one's routes to the
  // platform; naming that algorithm routes the platform afresh. Both must simulate the same run. An
  // oversubscribed fabric, where messages share uplinks: which route a pair takes changes the times.
  const std::string fabric = R"(
  fabric: {kind: cluster, gpus_per_node: 4, nvlink: {bandwidth: 300GB/s, latency: 1us},
           nic: {bandwidth: 50GB/s, latency: 2us}, leaf_ports: 8, oversubscription: 2}
)";
  const std::string training = "training: {overlap: bucketed, bucket: 4MB}\n";
  const sim::Scenario chosen = test::scenario_from_text(
      kModel + training + "cluster:\n  gpus: 64\n  collective: auto" + fabric, "auto.yaml");
  nlohmann::json with_auto = sim::run_isolated(chosen);
  const std::string picked = with_auto.at("collective").get<std::string>();
  INFO("auto picked " << picked);
  nlohmann::json named = sim::run_isolated(test::scenario_from_text(
      kModel + training + "cluster:\n  gpus: 64\n  collective: " + picked + fabric, "named.yaml"));
  for (auto* record : {&with_auto, &named})
    for (const char* key : {"sim_wall_s", "activities_per_s", "file", "name"})
      record->erase(key);
  CHECK(with_auto.dump() == named.dump());
}

TEST_CASE("auto's routes serve the platform only where the distinct pairs come first") {
  // A route depends on the requests before it: the estimate routes every flow in order, the platform
  // each distinct pair once. Their routes agree only while no repeated pair came before a new one.
  using Pairs = std::vector<std::pair<long long, long long>>;
  CHECK(sim::distinct_pairs_first(Pairs{{0, 1}, {1, 0}, {0, 1}, {1, 0}}));   // a ring's second phase
  CHECK(sim::distinct_pairs_first(Pairs{}));
  CHECK_FALSE(sim::distinct_pairs_first(Pairs{{0, 1}, {0, 1}, {1, 2}}));     // (1, 2) after a repeat
  CHECK_FALSE(sim::distinct_pairs_first(Pairs{{0, 0}, {0, 1}}));             // a GPU to itself is no route
  CHECK(sim::distinct_pairs_first(Pairs{{0, 1}, {2, 3}, {1, 1}}));
}
