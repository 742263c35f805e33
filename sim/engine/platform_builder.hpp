// Turns a validated fabric graph into a SimGrid platform: one host per GPU (speed = peak FLOP/s),
// full-duplex (split-duplex) links. Star fabrics use SimGrid's star zone.
#pragma once

#include "collectives/link_privacy.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/fabric_routes.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memwall::sim {

// A route as data: its directional links in order and its latency, summed in that order as SimGrid's
// route_to sums it.
struct PairRoute {
  std::vector<simgrid::s4u::Link*> links;
  double latency_s = 0;
};

struct RankPairHash {
  size_t operator()(const std::pair<long long, long long>& p) const {
    return std::hash<unsigned long long>()(static_cast<unsigned long long>(p.first) * 0x9E3779B97F4A7C15ULL ^
                                           static_cast<unsigned long long>(p.second));
  }
};

struct Platform {
  std::vector<simgrid::s4u::Host*> gpus; // in rank order (names sort the same way)
  // Route epochs: epoch e starts at epoch_start_s[e] (0 for the first) and routes around the links
  // down by then. A GPU whose routes a failure cuts gets a new host (same speed) from that epoch on,
  // whose routes avoid the links down; the others keep theirs. Actors move to the current epoch's
  // host (epoch_gpus[e][rank]) to use its routes.
  std::vector<std::vector<simgrid::s4u::Host*>> epoch_gpus; // [epoch][rank]; [0] is `gpus`
  std::vector<double> epoch_start_s;
  size_t epoch_at(double t_s) const;                       // the epoch in force at t_s
  // By SimGrid link name (both directions); shared with the views of several jobs (sim/jobs).
  struct LinkFacts {
    std::unordered_map<std::string, double> pj_per_bit;
    std::unordered_map<std::string, std::string> link_class;
  };
  std::shared_ptr<LinkFacts> links = std::make_shared<LinkFacts>();
  // The first epoch's route between every pair of ranks asked for, read without asking SimGrid.
  std::unordered_map<std::pair<long long, long long>, PairRoute, RankPairHash> routes;
};

// `pairs`: the (src, dst) ranks that will communicate. A star becomes SimGrid's star zone (every
// route implicit); any other graph a PairZone holding static routes for exactly these pairs
// (topologies::RouteFinder: shortest, balanced over equal-cost paths), so large fabrics stay cheap.
// `gpu_flops_per_s`: each GPU's host speed, by rank (peak x its straggler factor).
// `later_graphs`: the fabric after each mid-run link failure (subgraphs of `graph`, starting at
// `later_start_s`), each given its own route epoch; ignored for a star (it has no second path).
// Given the first epoch's routes (as link numbers) before any SimGrid object exists, returns the
// pairs that SimGrid must carry messages between (a simulation that times the others itself,
// sim/engine/private_rounds.hpp). Without later graphs, only those get a SimGrid route.
using RouteNeeds =
    std::function<std::vector<std::pair<long long, long long>>(const collectives::RouteLinks& routes)>;

// Whether the distinct pairs of `pairs` (src != dst, first appearance) are its first entries. Balanced
// routes depend only on the requests before them, so a new finder's routes for all of `pairs`, in
// order, then begin with the platform's own: `pair_routes` below serve.
bool distinct_pairs_first(const std::vector<std::pair<long long, long long>>& pairs);

// `needs`: see RouteNeeds; without it SimGrid carries every pair. `finder`: a RouteFinder of `graph`
// whose searches may serve (its loads are cleared first: the routes are those of a new finder),
// released once the routes are known.
// `pair_routes`: a new finder's routes for `pairs` in order, if known (collective: auto estimated
// them): where the distinct pairs are the first ones, their routes are those.
Platform build_platform(const topologies::FabricGraph& graph, const std::vector<double>& gpu_flops_per_s,
                        const std::vector<std::pair<long long, long long>>& pairs,
                        const std::vector<topologies::FabricGraph>& later_graphs = {},
                        const std::vector<double>& later_start_s = {}, const RouteNeeds& needs = nullptr,
                        std::shared_ptr<topologies::RouteFinder> finder = nullptr,
                        const topologies::FlatRoutes* pair_routes = nullptr);

} // namespace memwall::sim
