#include "collbench.hpp"

#include "collectives/all_to_all.hpp"
#include "collectives/channels.hpp"
#include "collectives/choice.hpp"
#include "collectives/estimate.hpp"
#include "collectives/link_privacy.hpp"
#include "sim/engine/collective_runner.hpp"
#include "sim/engine/link_events.hpp"
#include "sim/engine/platform_builder.hpp"
#include "sim/engine/private_rounds.hpp"
#include "sim/engine/simulation.hpp"
#include "topologies/fabric_loader.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Barrier.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>

namespace memwall::collbench {

namespace sg4 = simgrid::s4u;
using collectives::Protocol;
using collectives::Schedule;

namespace {

const std::vector<std::pair<Op, const char*>> kOps = {
    {Op::AllReduce, "all_reduce"}, {Op::AllGather, "all_gather"}, {Op::ReduceScatter, "reduce_scatter"},
    {Op::AllToAll, "all_to_all"},  {Op::Broadcast, "broadcast"},  {Op::SendRecv, "send_recv"}};

// A schedule for one byte of the op's size (flows scale linearly with the size), and what the tuner
// knows of it: its estimate at 0 bytes and per byte, and per round how many algorithm steps it takes
// and whether they cross servers.
struct Candidate {
  Schedule schedule;
  bool tree = false;
  bool nvls = false; // NVLink SHARP: Simple only, one latency per call (collectives/protocol.hpp)
  double seconds_per_byte = 0;
  // Per round: its steps, the share of its bytes that leaves a server (the share of its steps that
  // pay the protocol's network latency, as the runner counts them) and its longest
  // route latency (a crossing's, when some flow crosses).
  struct RoundSteps {
    double steps, net_share, route_latency_s;
  };
  std::vector<RoundSteps> round_steps;
};

Schedule one_round(const std::string& algorithm, collectives::Round round) {
  return Schedule{algorithm, {std::move(round)}};
}

// All-to-all as NCCL runs it (collectives/all_to_all.hpp): every pair's message at once, with PXN on
// servers whose GPUs each have a NIC; the relay forwards while it receives, so both hops are one round.
collectives::Round all_to_all_round(const CollbenchSpec& spec, const std::vector<collectives::GpuPlace>& places) {
  const long long n = static_cast<long long>(places.size());
  std::vector<long long> ranks(static_cast<size_t>(n));
  for (long long rank = 0; rank < n; ++rank)
    ranks[size_t(rank)] = rank;
  return collectives::Round{"all-to-all",
                            collectives::all_to_all_flows(ranks, places, collectives::pxn_applies(spec.fabric),
                                                          1.0 / double(n)),
                            0};
}

std::vector<Schedule> unit_schedules(const CollbenchSpec& spec, const topologies::FabricGraph& graph,
                                     long long channels) {
  const long long n = spec.gpus;
  const bool any = spec.algorithm == "auto";
  auto only = [&](const char* name) {
    if (!any && spec.algorithm != name)
      throw std::invalid_argument(std::string(op_name(spec.op)) + " runs as " + name + " only (got algorithm '" +
                                  spec.algorithm + "')");
  };
  std::vector<Schedule> out;
  switch (spec.op) {
  case Op::AllReduce:
    // `auto` chooses among NCCL's own algorithms (ring, tree, and NVLS where the fabric has it);
    // the others run when named.
    for (const char* name : {"ring", "hierarchical", "tree", "halving-doubling", "nvls"}) {
      const std::string algorithm = name;
      if (any ? algorithm != "ring" && algorithm != "tree" &&
                    (algorithm != "nvls" || !collectives::nvls_applies(graph, spec.fabric.nvls_efficiency))
              : spec.algorithm != name)
        continue;
      try {
        out.push_back(collectives::choose_collective(name, "topology", graph, 1.0, channels,
                                                     spec.fabric.nvls_efficiency)
                          .schedule);
      } catch (const std::invalid_argument&) {
        if (!any)
          throw;
      }
    }
    if (out.empty())
      throw std::invalid_argument("unknown algorithm '" + spec.algorithm + "' (expected " +
                                  collectives::kCollectiveNames + ")");
    return out;
  case Op::AllGather:
  case Op::ReduceScatter: { // a ring's half, with its channels
    only("ring");
    Schedule ring = collectives::choose_collective("ring", "topology", graph, 1.0, channels).schedule;
    return {one_round("ring", ring.rounds.at(spec.op == Op::ReduceScatter ? 0 : 1))};
  }
  case Op::Broadcast: { // a pipelined chain along the ring from rank 0: each hop carries all the data
    only("ring");
    const std::vector<long long> order = collectives::topology_ring_order(graph);
    collectives::Round r{"broadcast chain", {}, double(n - 2)};
    for (size_t i = 0; i + 1 < order.size(); ++i)
      r.flows.push_back({order[i], order[i + 1], 1.0});
    return {one_round("ring", std::move(r))};
  }
  case Op::SendRecv: { // nccl-tests' sendrecv: rank r sends to r + 1 and receives from r - 1
    only("p2p");
    collectives::Round r{"send/recv", {}, 0};
    for (long long rank = 0; rank < n; ++rank)
      r.flows.push_back({rank, (rank + 1) % n, 1.0});
    return {one_round("p2p", std::move(r))};
  }
  case Op::AllToAll: { // every GPU sends 1 / n of its buffer to every other, at once
    only("p2p");
    return {one_round("p2p", all_to_all_round(spec, collectives::places_of_ranks(graph)))};
  }
  }
  return out;
}

Candidate describe(Schedule unit, const topologies::FabricGraph& graph,
                   const std::vector<collectives::GpuPlace>& places) {
  Candidate c;
  c.tree = unit.algorithm == "tree";
  c.nvls = unit.algorithm == "nvls";
  // Estimates are linear in the size: the unit schedule's busiest links give the seconds per byte.
  const std::vector<collectives::RoundEstimate> rounds = collectives::estimate_rounds(
      unit, graph, topologies::RouteFinder(graph).flat_routes(collectives::route_requests(unit, graph)));
  for (size_t k = 0; k < unit.rounds.size(); ++k) {
    const auto& round = unit.rounds[k];
    double all_bytes = 0, net_bytes = 0;
    for (const auto& f : round.flows) {
      const auto& a = places[size_t(f.src)];
      const auto& b = places[size_t(f.dst)];
      all_bytes += f.bytes;
      if (a.server < 0 || a.server != b.server)
        net_bytes += f.bytes;
    }
    c.seconds_per_byte += rounds[k].busiest_s;
    c.round_steps.push_back({rounds[k].steps, all_bytes > 0 ? net_bytes / all_bytes : 0.0, rounds[k].route_latency_s});
  }
  c.schedule = std::move(unit);
  return c;
}

double base_latency_s(const Candidate& c, const collectives::ProtocolFigures& p) {
  if (c.nvls)
    return collectives::kNvlsCallLatency_s;
  return c.tree ? p.tree_base_s : p.ring_base_s;
}

// NVLS's own efficiency is in its schedule's bytes (collectives/schedule.hpp).
double wire_bytes_per_byte(const Candidate& c, const collectives::ProtocolFigures& p) {
  if (c.nvls)
    return 1.0;
  return c.tree ? p.tree_wire_bytes_per_byte : p.ring_wire_bytes_per_byte;
}

// NVLS pays its call's latency once (base_latency_s); its one round then only its routes'.
sim::StepLatency step_latency(const Candidate& c, const collectives::ProtocolFigures& p) {
  if (c.nvls)
    return sim::StepLatency{0, 0};
  return c.tree ? sim::StepLatency{p.tree_nvlink_step_s, p.tree_net_step_s}
                : sim::StepLatency{p.ring_nvlink_step_s, p.ring_net_step_s};
}

// The tuner: base latency, then the steps at the larger of the links' and the protocol's latency,
// then the bytes as the protocol puts them on the wire.
double estimate_s(const Candidate& c, const collectives::ProtocolFigures& p, double bytes) {
  const sim::StepLatency step = step_latency(c, p);
  double protocol_steps_s = 0;
  for (const auto& r : c.round_steps) {
    // Each step pays the larger of its route's and the protocol's latency (as the runner does);
    // hops that stay in a server have NVLink's short routes, the longest route is a crossing's.
    const double in_server_s = std::max(step.nvlink_s, r.net_share > 0 ? 0.0 : r.route_latency_s);
    protocol_steps_s += r.steps * (r.net_share * std::max(step.net_s, r.route_latency_s) +
                                   (1 - r.net_share) * in_server_s);
  }
  return base_latency_s(c, p) + protocol_steps_s +
         wire_bytes_per_byte(c, p) * bytes * c.seconds_per_byte;
}

} // namespace

Op parse_op(const std::string& name) {
  for (const auto& [op, text] : kOps)
    if (name == text)
      return op;
  throw std::invalid_argument("unknown operation '" + name + "' (expected " + kOpNames + ")");
}

const char* op_name(Op op) {
  for (const auto& [o, text] : kOps)
    if (o == op)
      return text;
  return "?";
}

double bus_factor(Op op, long long gpus) {
  const double n = double(gpus);
  switch (op) {
  case Op::AllReduce:
    return 2.0 * (n - 1) / n;
  case Op::AllGather:
  case Op::ReduceScatter:
  case Op::AllToAll:
    return (n - 1) / n;
  default:
    return 1.0;
  }
}

std::vector<double> size_range(double from, double to, double factor) {
  std::vector<double> sizes;
  for (double s = from; s <= to * (1 + 1e-12); s *= factor)
    sizes.push_back(s);
  return sizes;
}

CollbenchResult run_collbench(const CollbenchSpec& spec) {
  const auto wall_start = std::chrono::steady_clock::now();
  const long long n = spec.gpus;
  if (n < 2)
    throw std::invalid_argument("a collective needs at least 2 GPUs");
  if (spec.op == Op::AllToAll && n > kMaxAllToAllGpus)
    throw std::invalid_argument("all_to_all is simulated message by message: at most " +
                                std::to_string(kMaxAllToAllGpus) + " GPUs");
  const topologies::FabricGraph graph = topologies::build_fabric_graph(spec.fabric, n);
  CollbenchResult result;
  result.channels = spec.channels > 0 ? spec.channels : collectives::default_channels(spec.fabric);
  const std::vector<collectives::GpuPlace> places = collectives::places_of_ranks(graph);
  std::vector<Candidate> candidates;
  for (Schedule& unit : unit_schedules(spec, graph, result.channels))
    candidates.push_back(describe(std::move(unit), graph, places));
  std::vector<Protocol> protocols = collectives::all_protocols();
  if (spec.protocol != "auto")
    protocols = {collectives::parse_protocol(spec.protocol)};

  // Per size, the tuner's pick; per distinct pick, one runner.
  struct Pick {
    size_t candidate;
    Protocol protocol;
    double estimate_s;
  };
  std::vector<Pick> picks;
  std::map<std::pair<size_t, Protocol>, size_t> runner_of;
  for (double bytes : spec.sizes_bytes) {
    Pick best{0, protocols.front(), std::numeric_limits<double>::infinity()};
    for (size_t c = 0; c < candidates.size(); ++c)
      for (Protocol p : protocols) {
        if (candidates[c].nvls && p != Protocol::Simple) // NCCL runs NVLS with Simple only
          continue;
        if (const double t = estimate_s(candidates[c], collectives::protocol_figures(p), bytes); t < best.estimate_s)
          best = {c, p, t};
      }
    if (!std::isfinite(best.estimate_s))
      throw std::invalid_argument("nvls runs with the simple protocol only (NCCL's NVLS kernels have no LL or LL128)");
    picks.push_back(best);
    runner_of.try_emplace({best.candidate, best.protocol}, runner_of.size());
  }

  const std::unique_ptr<sg4::Engine> engine = sim::create_engine();
  std::vector<std::pair<long long, long long>> pairs;
  std::vector<size_t> used; // candidates that run, each once
  for (const auto& [key, index] : runner_of)
    if (std::find(used.begin(), used.end(), key.first) == used.end())
      used.push_back(key.first);
  for (size_t c : used)
    for (const auto& round : candidates[c].schedule.rounds)
      for (const auto& f : round.flows)
        pairs.emplace_back(f.src, f.dst);
  // Calls run one at a time (a barrier between them): a schedule's private rounds stay private.
  std::map<size_t, std::vector<bool>> private_of;
  sim::RouteNeeds needs = [&](const collectives::RouteLinks& routes) {
    std::vector<std::pair<long long, long long>> carried;
    for (size_t c : used) {
      const Schedule& schedule = candidates[c].schedule;
      private_of[c] = collectives::private_rounds(schedule, routes);
      for (size_t k = 0; k < schedule.rounds.size(); ++k)
        if (!private_of[c][k])
          for (const auto& f : schedule.rounds[k].flows)
            carried.emplace_back(f.src, f.dst);
    }
    return carried;
  };
  if (sim::simulate_every_message())
    needs = nullptr;
  const sim::Platform platform = sim::build_platform(graph, std::vector<double>(size_t(n), 1e12), pairs, {}, {}, needs);
  sim::RunRecorder recorder(n, model::GpuSpec{});
  std::vector<std::unique_ptr<sim::CollectiveRunner>> runners(runner_of.size());
  for (const auto& [key, index] : runner_of) {
    const Candidate& c = candidates[key.first];
    runners[index] = std::make_unique<sim::CollectiveRunner>(
        c.schedule, platform, recorder, spec.fabric.message_latency_s, nullptr,
        private_of.count(key.first) ? private_of[key.first] : std::vector<bool>{},
        step_latency(c, collectives::protocol_figures(key.second)));
  }

  const size_t sizes = spec.sizes_bytes.size();
  std::vector<double> start_s(sizes, 0), end_s(sizes, 0);
  sg4::BarrierPtr barrier = sg4::Barrier::create(static_cast<unsigned>(n));
  for (long long rank = 0; rank < n; ++rank) {
    sg4::Host* host = platform.gpus[size_t(rank)];
    sg4::Actor::create(host->get_name(), host, [&, rank] {
      for (size_t i = 0; i < sizes; ++i) {
        barrier->wait();
        const Pick& pick = picks[i];
        const auto& figures = collectives::protocol_figures(pick.protocol);
        const double t0 = sg4::Engine::get_clock();
        if (rank == 0)
          start_s[i] = t0;
        sg4::this_actor::sleep_for(base_latency_s(candidates[pick.candidate], figures));
        runners[runner_of.at({pick.candidate, pick.protocol})]->run(
            rank, static_cast<long long>(i), sim::CollectivePart::AllReduce,
            spec.sizes_bytes[i] * wire_bytes_per_byte(candidates[pick.candidate], figures), static_cast<long long>(i));
        end_s[i] = std::max(end_s[i], sg4::Engine::get_clock());
      }
      recorder.record_finish(rank, sg4::Engine::get_clock());
    });
  }
  engine->run();
  sim::check_run_complete(recorder.totals(), sim::FaultLog{});
  for (const sim::GpuTotals& t : recorder.totals()) {
    result.bytes_sent += t.bytes_sent;
    result.bytes_received += t.bytes_received;
  }
  for (size_t i = 0; i < sizes; ++i) {
    CollbenchRow row;
    row.size_bytes = spec.sizes_bytes[i];
    row.count = static_cast<long long>(row.size_bytes / 4);
    row.time_s = end_s[i] - start_s[i];
    row.algbw_bytes_per_s = row.size_bytes / row.time_s;
    row.busbw_bytes_per_s = row.algbw_bytes_per_s * bus_factor(spec.op, n);
    row.algorithm = candidates[picks[i].candidate].schedule.algorithm;
    row.protocol = collectives::protocol_figures(picks[i].protocol).name;
    row.estimate_s = picks[i].estimate_s;
    result.rows.push_back(row);
  }
  result.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

} // namespace memwall::collbench
