#include "sim/engine/simulation.hpp"

#include "collectives/channels.hpp"
#include "collectives/choice.hpp"
#include "sim/engine/collective_runner.hpp"
#include "sim/engine/link_events.hpp"
#include "parallel/flights.hpp"
#include "parallel/planes.hpp"
#include "parallel/stage_setup.hpp"
#include "sim/engine/platform_builder.hpp"
#include "sim/engine/private_rounds.hpp"
#include "topologies/fabric_loader.hpp"
#include "sim/output/trace_export.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <cstdio>
#include <optional>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

namespace {

void configure_engine_models() {
  // Closed-form-exact network model: no TCP window bound, no cross-traffic of acknowledgements.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
#ifdef MEMWALL_SANITIZE
  sg4::Engine::set_config("contexts/stack-size:1024"); // room for instrumented frames
#else
  // Actors are shallow; small stacks let 16k GPUs fit in memory.
  sg4::Engine::set_config("contexts/stack-size:64");
#endif
}

} // namespace

// Each actor's stack guard page splits its stack's mapping: beyond about 30,000 actors (16k GPUs,
// each with a communication stream actor) they pass Linux's default limit of 65,530 mappings and
// SimGrid aborts. Such runs go without the guard (the stacks are as deep as at 1,024 GPUs). Only
// those: without guards, SimGrid's stacks are resident from the start. Set before the actors exist.
void guard_stacks([[maybe_unused]] long long actors) { // unused in sanitized builds
#ifndef MEMWALL_SANITIZE
  if (actors > 30000)
    sg4::Engine::set_config("contexts/guard-size:0");
#endif
}

model::StepMetrics summarise_run(const Scenario& s, const std::vector<GpuTotals>& totals, double makespan_s) {
  model::StepMetrics m;
  const double gpus = double(totals.size());
  const double steps = double(s.steps);
  double busiest_comm_s = 0;
  for (const GpuTotals& t : totals) {
    busiest_comm_s = std::max(busiest_comm_s, t.time_s(PhaseKind::AllReduce));
    m.t_compute_s += t.compute_time_s();
    m.t_allreduce_s += t.time_s(PhaseKind::AllReduce);
    m.t_optimizer_s += t.time_s(PhaseKind::Optimizer);
    m.flops += t.flops;
    m.hbm_bytes += t.hbm_bytes;
    m.e_arith_j += t.e_arith_j;
    m.e_hbm_j += t.e_hbm_j;
    m.e_network_j += t.e_network_j;
  }
  for (double* field : {&m.t_compute_s, &m.t_allreduce_s, &m.t_optimizer_s, &m.flops, &m.hbm_bytes,
                        &m.e_arith_j, &m.e_hbm_j, &m.e_network_j})
    *field /= gpus * steps;
  m.params = scenario_params(s);
  // A replica's micro-batches are shared by its tensor x pipeline x context GPUs.
  const model::ParallelLayout& l = s.layout;
  m.tokens_per_gpu = s.tokens_per_microbatch * double(s.microbatches) / double(l.tensor * l.pipeline * l.context);
  m.step_time_s = makespan_s / steps;
  // What the all-reduce adds to the step, synchronisation waits included (its exposed time). With
  // aggregated rounds, GPUs behind fast links finish their share early; the step's end is the truth.
  if (s.gpus > 1)
    m.t_allreduce_s = m.step_time_s - m.t_compute_s - m.t_optimizer_s;
  // All communication: with overlap, the busiest GPU's collectives (partly hidden under compute);
  // without, all of it is exposed.
  m.t_comm_total_s = s.training.overlap_bucketed ? busiest_comm_s / steps : m.t_allreduce_s;
  // Static power (and the activity model's clocked wait) burns for the whole run on every GPU.
  m.e_static_j = model::awake_power_w(s.gpu) * m.step_time_s;
  model::finish_ratios(m, s.gpu.peak_flops_per_s);
  return m;
}

// An impossible end state is never a result: SimGrid reports a deadlock (activities that can never
// complete) but returns normally, so every GPU must have run to its end and every byte sent must
// have been received.
void check_run_complete(const std::vector<GpuTotals>& totals, const FaultLog& faults) {
  std::vector<long long> stuck;
  double sent = 0, received = 0;
  for (size_t rank = 0; rank < totals.size(); ++rank) {
    if (!totals[rank].finished)
      stuck.push_back(static_cast<long long>(rank));
    sent += totals[rank].bytes_sent;
    received += totals[rank].bytes_received;
  }
  std::string events;
  for (const auto& line : faults.applied)
    events += (events.empty() ? "" : "; ") + line;
  const std::string after = events.empty() ? "" : " after " + events;
  if (!stuck.empty()) {
    std::string which;
    for (size_t i = 0; i < std::min<size_t>(stuck.size(), 8); ++i)
      which += (i ? ", " : "") + std::to_string(stuck[i]);
    if (stuck.size() > 8)
      which += ", ... (" + std::to_string(stuck.size()) + " GPUs)";
    throw std::runtime_error("the run stalled" + after + ": GPU " + which +
                             " never finished its step (a deadlock: messages that can never be delivered). "
                             "No result is reported.");
  }
  if (std::abs(sent - received) > 1e-9 * std::max(1.0, std::max(sent, received)))
    throw std::runtime_error("bytes were lost" + after + ": " + std::to_string(sent) + " B sent, " +
                             std::to_string(received) + " B received. No result is reported.");
}

std::unique_ptr<sg4::Engine> create_engine() {
  xbt_log_control_set("root.thresh:warning");
#ifdef MEMWALL_SANITIZE
  // AddressSanitizer cannot follow SimGrid's own stack switching (raw/ucontext contexts): it warns
  // "ignoring requested __asan_handle_no_return" and may report false stack errors. In sanitized
  // builds actors run as system threads. The context factory is chosen when the Engine is built, so
  // this one setting goes on its command line.
  int argc = 2;
  char name[] = "memwall", factory[] = "--cfg=contexts/factory:thread";
  char* argv[] = {name, factory, nullptr};
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
#else
  auto engine = std::make_unique<sg4::Engine>("memwall");
#endif
  configure_engine_models();
  return engine;
}

bool complete_data_parallel_layout(Scenario& s) {
  if (s.grouped_layout())
    return false;
  const bool changed = s.layout.data != s.gpus || s.layout.stage_layers.size() != 1;
  s.layout.data = s.gpus;
  s.layout.stage_layers = {s.shape.layers};
  return changed;
}

namespace {

// Pure data parallelism's collective (`cluster.collective`), chosen over every GPU; none for a
// grouped layout (its rings are built by parallel::plan_stage_job).
std::optional<collectives::CollectiveChoice> choose_data_collective(const Scenario& s,
                                                                    const topologies::FabricGraph& graph,
                                                                    const StepWork& work) {
  if (s.grouped_layout())
    return std::nullopt;
  collectives::CollectiveChoice choice = collectives::choose_collective(s.collective, s.ring_order, graph, work.gradient_bytes,
                                                                        s.channels, s.fabric.nvls_efficiency);
  if (!choice.estimates_s.empty()) {
    std::string line = s.name + ": collective auto chose " + choice.schedule.algorithm + " (alpha-beta estimates:";
    for (const auto& [name, t] : choice.estimates_s)
      line += " " + name + " " + std::to_string(t) + " s";
    std::fprintf(stderr, "memwall: %s)\n", line.c_str());
  }
  return choice;
}

} // namespace

// One engine for every layout: one actor per TP group (sim/parallel; a pure data-parallel job's
// groups are single GPUs), its pipeline sends, its data-parallel stream beside the backward.
RunResult run_simulation(const Scenario& scenario, const OutputOptions& output) {
  const auto wall_start = std::chrono::steady_clock::now();
  Scenario completed = scenario; // cheap beside any simulation
  const Scenario& s = complete_data_parallel_layout(completed) ? completed : scenario;
  const std::unique_ptr<sg4::Engine> engine_owner = create_engine();
  const topologies::FabricGraph graph =
      without_links_down_at_start(s, topologies::build_fabric_graph(s.fabric, s.gpus));
  const StepWork work = plan_step_work(s);
  std::optional<collectives::CollectiveChoice> choice = choose_data_collective(s, graph, work);
  std::vector<double> speeds = gpu_speed_factors(s);
  for (double& speed : speeds)
    speed *= s.gpu.peak_flops_per_s;
  const std::vector<collectives::GpuPlace> places = collectives::places_of_ranks(graph);
  const LaterFabrics later = fabrics_after_failures(s, graph);
  // The chosen collective's pairs in its schedule's order (balanced routes follow the order asked),
  // or the layout's.
  std::vector<std::pair<long long, long long>> pairs;
  if (choice) {
    for (const auto& round : choice->schedule.rounds)
      for (const auto& f : round.flows)
        pairs.emplace_back(f.src, f.dst);
  } else {
    pairs = parallel::parallel_pairs(s, places);
  }
  // Rounds of the chosen collective whose messages can never share a link are timed without SimGrid
  // messages (private_rounds.hpp), where the links never change and the trace does not list every
  // message.
  std::vector<bool> private_rounds;
  RouteNeeds needs = [&](const collectives::RouteLinks& routes) {
    private_rounds = collectives::private_rounds(choice->schedule, routes);
    std::vector<std::pair<long long, long long>> carried;
    for (size_t k = 0; k < choice->schedule.rounds.size(); ++k)
      if (!private_rounds[k])
        for (const auto& f : choice->schedule.rounds[k].flows)
          carried.emplace_back(f.src, f.dst);
    return carried;
  };
  if (!choice || !s.link_events.empty() || output.tracing() || simulate_every_message())
    needs = nullptr;
  const Platform platform =
      choice ? build_platform(graph, speeds, pairs, later.graphs, later.start_s, needs, std::move(choice->routes),
                              choice->flow_routes.size() == 0 ? nullptr : &choice->flow_routes)
             : build_platform(graph, speeds, pairs, later.graphs, later.start_s);
  if (choice)
    choice->flow_routes = {}; // no longer needed
  std::optional<trace::TraceBuffer> trace;
  if (output.tracing())
    trace.emplace(output.trace_level, s.gpus);
  RunRecorder recorder(s.gpus, s.gpu, trace ? &*trace : nullptr);
  FaultLog faults;
  std::optional<CollectiveRunner> data_collective;
  if (choice)
    data_collective.emplace(choice->schedule, platform, recorder, s.fabric.message_latency_s, &faults,
                            private_rounds);
  guard_stacks(2 * s.gpus / s.layout.tensor); // a TP group's actor and its stream or pipeline sends
  const std::unique_ptr<parallel::StageJob> job =
      parallel::plan_stage_job(s, work, platform, recorder, places, data_collective ? &*data_collective : nullptr,
                               work.gradient_bytes);
  if (!s.link_events.empty()) { // flows resend around a failed link (parallel/flights.hpp)
    job->faults = &faults;
    const parallel::StageJob& j = *job;
    const CollectiveRunner* runner = data_collective ? &*data_collective : nullptr;
    sg4::Actor::create("link-events", platform.gpus.front(), LinkEventActor(s, faults, [&j, runner] {
                         parallel::note_link_down(j);
                         if (runner)
                           runner->note_link_down();
                       }));
  }
  // One job on the platform: its TP ranks' flows may mirror one another (MEMWALL_SIMULATE_MESSAGES=1
  // simulates every flow, the reference tests/check_planes.py compares against).
  const bool mirrored = parallel::mirror_planes(*job, !simulate_every_message());
  parallel::create_stage_actors(*job);
  sg4::Engine::get_instance()->run();
  if (!faults.stall.empty())
    throw std::runtime_error(faults.stall);
  RunResult result;
  result.per_gpu = recorder.totals();
  check_run_complete(result.per_gpu, faults);
  for (const GpuTotals& t : result.per_gpu) {
    result.makespan_s = std::max(result.makespan_s, t.finish_time_s);
    result.activities += t.activities;
  }
  result.metrics = summarise_run(s, result.per_gpu, result.makespan_s);
  result.collective = choice ? choice->schedule.algorithm : "ring";
  result.mirrored_planes = mirrored ? s.layout.tensor : 1;
  result.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (trace) { // with a pipeline, the time after a stage's end is the pipeline's drain (the breakdown's bubble)
    recorder.close_run(result.makespan_s,
                       s.layout.pipeline > 1 ? trace::TracePhase::PipelineWait : trace::TracePhase::Wait);
    export_trace(s, result, recorder, *trace, output);
  }
  return result;
}

} // namespace memwall::sim
