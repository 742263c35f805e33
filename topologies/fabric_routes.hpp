// Static routes over a fabric graph: the cheapest paths for bulk transfers (the sum over their links
// of seconds per byte, 1 / bandwidth), spread over equal-cost next hops by choosing, at each branch,
// the link that carries the fewest routes so far (a balanced ECMP). Routes are requested in a fixed
// order, so they are deterministic. Two GPUs of one server thus talk over NVLink, never via NICs.
#pragma once

#include "fabric_graph.hpp"
#include "huge_pages.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memwall::topologies {

struct RouteHop {
  boost::graph_traits<FabricGraph>::edge_descriptor edge;
  bool forward = true; // traversed from the lower-numbered vertex to the higher one
  size_t index = 0;     // the edge's index (edge_index), for per-edge tables
};

// Routes as link directions only, flat: route i's are slots[begin[i]] .. slots[begin[i + 1] - 1], each
// 2 x edge index + direction (1: from the lower-numbered vertex to the higher), as the loads count
// them. A 16,384-GPU halving-doubling asks for 460k routes: one vector each cost more to allocate
// than the routes cost to find.
struct FlatRoutes {
  std::vector<size_t> begin{0};
  std::vector<uint32_t> slots;
  size_t size() const { return begin.size() - 1; }
};

class RouteFinder {
public:
  explicit RouteFinder(const FabricGraph& graph);

  std::vector<RouteHop> route(FabricVertex src, FabricVertex dst);
  // The routes that route() called on each request in turn would give, hop for hop. The searches
  // (one per destination, the costly part) run in destination order, so a batch with more
  // destinations than the cache holds searches each once; the least-loaded choices are then made in
  // request order, as route() makes them.
  std::vector<std::vector<RouteHop>> routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests);
  // The same routes, flat.
  FlatRoutes flat_routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests);
  // The routes of requests already prepared, balanced on `load` (by 2 x edge index + direction,
  // counted into it; all zero: as a new finder) instead of this finder's own loads. It changes
  // nothing in the finder, so walks of several batches can run at once, on threads of their own.
  FlatRoutes flat_routes(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests,
                         std::vector<long long>& load) const;
  size_t load_slots() const { return load_.size(); }
  // Searches ahead for routes() (its first pass), for requests of several batches at once: each
  // destination is then searched once for all of them. The next hops found stay with this finder.
  void prepare(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests);
  // Forgets the loads (routes chosen so far), keeping the searches: a fresh balance, as a new finder.
  void clear_loads() { std::fill(load_.begin(), load_.end(), 0); }
  // Counts a route chosen elsewhere (an earlier routing that stays) in the link loads that balance
  // the next routes.
  void add_load(const std::vector<RouteHop>& route);
  // Cost (seconds per byte along the cheapest path) from every vertex to `dst`, by vertex.
  std::vector<double> costs_to(FabricVertex dst);
  // The same, final for `src` and every vertex at most as far from `dst` (all a route from `src`
  // looks at); farther ones may still be unsettled. The search from `dst` stops there and resumes
  // for a farther source later, popping vertices in the same order as a full search, so the costs
  // it settles are bit for bit the full search's. By vertex; valid until the next search (the
  // searches of the last destinations only are kept).
  const double* costs_to(FabricVertex dst, FabricVertex src);

private:
  static constexpr size_t kMaxCachedDestinations = 256;
  // Costs to a destination, read from its own search or composed from its neighbours' searches.
  struct CostView;
  const FabricGraph& graph_;
  // Out-edges in boost's order as flat arrays: the searches' and walks' inner loops, without a
  // lookup of the edge index per hop.
  std::vector<size_t> out_begin_;
  std::vector<FabricVertex> out_target_;
  std::vector<double> out_cost_; // 1 / bandwidth
  std::vector<size_t> out_index_; // edge index
  std::vector<boost::graph_traits<FabricGraph>::edge_descriptor> out_edge_;
  // A vertex of degree 1 (a GPU on a star, a node's GPUs on its NVSwitch) is never on another vertex's
  // path: the searches leave it out (its cost is its neighbour's plus its link, when asked), so a
  // search from one GPU of a star does not touch the other N - 1. Per vertex, the positions in the
  // flat arrays of its out-edges to other vertices, and for a pendant its own position in its
  // neighbour's list.
  std::vector<char> pendant_;
  std::vector<size_t> core_begin_;
  std::vector<size_t> core_pos_;
  std::vector<size_t> pendant_pos_;
  // A Dijkstra search from a destination, resumable. Its queue holds buckets of equal cost (the
  // fabric's paths have few distinct costs), popped in cost order and, within a bucket, in vertex
  // order: the order of a priority queue of (cost, vertex), without its log V per push and pop. A
  // vertex enters a bucket only from a cheaper one (link costs are positive), so a bucket is full
  // before it is popped. A popped vertex whose cheapest link would reach no nearer than the radius
  // asked for waits in `deferred`, keyed by that reach, final but not expanded: a fat-tree's leaf
  // search that needs one far GPU's cost expands that GPU's leaf's link, not every leaf's links to
  // every GPU of the fabric (which made `topo` quadratic: 60 s at 131,072 GPUs).
  struct Bucket {
    std::vector<FabricVertex> vertices;
    double least_link = std::numeric_limits<double>::infinity(); // its vertices' cheapest onward link
  };
  struct Waiting { // popped vertices of one cost, final, whose links are not relaxed yet
    double cost;
    std::vector<FabricVertex> vertices;
  };
  struct Search {
    double* cost = nullptr; // one vertex each, in cost_slabs_
    std::map<double, Bucket> queue;
    std::map<double, std::vector<Waiting>> deferred; // by the least cost their links could reach
    std::vector<FabricVertex> touched;                // vertices whose cost is set: what a reuse resets
  };
  Search& search_to(FabricVertex dst);
  void sort_vertices(std::vector<FabricVertex>& bucket);
  std::vector<uint64_t> bitmap_; // sort_vertices' scratch, all zero between calls
  // Per vertex, its cheapest link, and its cheapest to a vertex other than a pendant.
  std::vector<double> min_link_;
  std::vector<double> min_core_link_;
  // What v's expansion relaxes starts with this link: all of the origin's links, else the core ones.
  double onward_link(FabricVertex v, FabricVertex origin) const {
    return v == origin ? min_link_[v] : min_core_link_[v];
  }
  static constexpr FabricVertex kNoProbe = ~FabricVertex(0);
  // The least cost in the queue or among the waiting vertices (infinite when both are empty):
  // every vertex with a cost at most this is final.
  static double frontier(const Search& s);
  // Queues v at `cost` (its onward links: all from the origin, else those to non-pendants).
  void push(Search& s, FabricVertex v, double cost, FabricVertex origin);
  // Keeps popped vertices of one cost waiting until a radius beyond `reach`.
  static void wait(Search& s, double reach, double cost, std::vector<FabricVertex>&& vertices);
  // Relaxes u's links (all of them from the search's origin, else those to non-pendants).
  void expand(Search& s, FabricVertex origin, FabricVertex u);
  // Pops the nearest bucket, waiting or queued: expands its vertices whose cheapest link reaches
  // below `radius`, and keeps the others waiting.
  void pop_next(Search& s, FabricVertex origin, double radius);
  // Sets the probe's cost from its neighbours whose costs are final.
  void probe_fill(Search& s, FabricVertex probe);
  // Pops until every vertex nearer to `origin` than `probe` is final, and the probe too (kNoProbe:
  // the whole search). The costs are those of a full search.
  void settle(Search& s, FabricVertex origin, FabricVertex probe);
  // Settles the searches from dst's neighbours (cached in `slots`, in dst's out-edge order) as far
  // as a route from `src` to a composed destination looks.
  void settle_through(const std::vector<size_t>& slots, FabricVertex dst, FabricVertex src);
  // Settles what a route from `src` to `dst` looks at, and sets a pendant `src`'s cost.
  const double* settle_for(Search& s, FabricVertex dst, FabricVertex src);
  // The cached searches (at most kMaxCachedDestinations, then all forgotten at once) and their slots,
  // reused: a search resets only the costs it set, so a star's N searches cost N, not N x V.
  std::unordered_map<FabricVertex, size_t> cached_;
  std::vector<Search> searches_;
  // The searches' costs, kSlabSearches searches a slab, in huge pages (huge_pages.hpp): 256 searches of
  // a 131,072-GPU fabric are 0.6 GB, touched once each in 4 KiB pages otherwise. Slots never move.
  static constexpr size_t kSlabSearches = 16;
  std::vector<std::vector<double, HugePageAllocator<double>>> cost_slabs_;
  size_t searches_used_ = 0;
  void forget_searches() { // their slots are reused, from the first
    cached_.clear();
    searches_used_ = 0;
  }
  // A pendant's cost: its neighbour's plus its link, once the neighbour's is known.
  void fill_pendant(Search& s, FabricVertex v);
  void set_cost(Search& s, FabricVertex v, double cost) {
    if (s.cost[v] == std::numeric_limits<double>::infinity())
      s.touched.push_back(v);
    s.cost[v] = cost;
  }
  // The equal-cost next hops towards a destination: for each vertex a route may pass, the out-edges
  // onto a cheapest path (route()'s candidates, in boost's out-edge order). They depend on the costs
  // only, not on the source or the loads, so the routes to one destination share them.
  struct Candidate {
    RouteHop hop;
    FabricVertex next;
  };
  // Candidate lists, stored once: per destination and vertex, the index of its list in pool_. A
  // composed destination's vertex reached through one neighbour only shares that neighbour's list
  // (the edges onto a cheapest path to the neighbour are those onto one to the destination), kept
  // in toward_ by (neighbour, vertex): a fat-tree's spines scan their links once per leaf or
  // NVSwitch, not once per GPU.
  // The lists end to end, in huge pages (huge_pages.hpp): millions of small lists at 131,072 GPUs.
  struct CandidateList {
    const Candidate* first;
    const Candidate* last;
    const Candidate* begin() const { return first; }
    const Candidate* end() const { return last; }
  };
  class CandidatePool {
  public:
    size_t add(const std::vector<Candidate>& list) { // its index
      items_.insert(items_.end(), list.begin(), list.end());
      begin_.push_back(items_.size());
      return begin_.size() - 2;
    }
    CandidateList operator[](size_t i) const { return {items_.data() + begin_[i], items_.data() + begin_[i + 1]}; }

  private:
    std::vector<Candidate, HugePageAllocator<Candidate>> items_;
    std::vector<size_t, HugePageAllocator<size_t>> begin_{0};
  };
  CandidatePool pool_;
  // (vertex pair) -> index, open addressing: the walks look up one per hop, millions at 16k GPUs,
  // where std::unordered_map's nodes cost a cache miss each.
  class PairIndex {
  public:
    explicit PairIndex(size_t vertices) : vertices_(vertices) {}
    const size_t* find(FabricVertex a, FabricVertex b) const;
    void insert(FabricVertex a, FabricVertex b, size_t value);

  private:
    static constexpr uint64_t kEmpty = ~uint64_t(0);
    size_t slot(uint64_t key) const;
    size_t vertices_;
    size_t size_ = 0;
    using Slots = std::vector<std::pair<uint64_t, size_t>, HugePageAllocator<std::pair<uint64_t, size_t>>>;
    Slots slots_;
  };
  PairIndex next_hops_; // (destination, vertex) -> list, or kDelegated | via (prepare)
  PairIndex toward_;    // (neighbour searched from, vertex) -> list
  // `toward` (if given): the via whose list it is when u delegates to one (kNoProbe: none).
  size_t list_at(FabricVertex u, FabricVertex dst, const CostView& cost, FabricVertex* toward = nullptr);
  // In next_hops_, a delegating vertex's entry: this bit and the via (prepare).
  static constexpr size_t kDelegated = size_t(1) << 63;
  // u's candidates towards `dst`, whose costs are `cost` (final up to u's cost).
  std::vector<Candidate> next_hops(FabricVertex u, FabricVertex dst, const CostView& cost) const;
  // A destination whose neighbours are all switches (a GPU on a fat-tree, star or NVSwitch) is
  // reached through one of them: its cost from any other vertex is the least, over its links, of the
  // neighbour's cost plus the link. The batched routes read its costs so, from its neighbours'
  // searches, which the GPUs of a server or leaf share: a 16k-GPU DGX fabric is searched from its
  // 2,560 switches next to GPUs, not from its 16,384 GPUs.
  static constexpr size_t kMaxComposedLinks = 8;
  bool composed(FabricVertex dst) const;
  CostView view_to(FabricVertex dst, FabricVertex src);
  // The least-loaded candidate (the first of equals), its link direction's load counted.
  const Candidate& take_least_loaded(CandidateList next, FabricVertex u, FabricVertex dst,
                                     std::vector<long long>& load) const;
  // routes()' walks, after prepare(): hop(i, candidate) for each hop of request i, in order.
  template <class Hop>
  void walk(const std::vector<std::pair<FabricVertex, FabricVertex>>& requests, std::vector<long long>& load,
            Hop&& hop) const;
  std::vector<long long> load_; // by 2 x edge index + direction: routes using it
};

// Two path costs equal up to rounding (equal-cost paths summed in another order).
bool same_route_cost(double a, double b);

// Edge index (position in boost::edges order), for per-edge tables.
size_t edge_index(const FabricGraph& graph, boost::graph_traits<FabricGraph>::edge_descriptor e);
// Gives every edge its index (edges() order); build_fabric_graph calls it before anything reads the graph.
void number_edges(const FabricGraph& graph);

} // namespace memwall::topologies
