#include "sim/jobs/jobs_run.hpp"

#include "collectives/channels.hpp"
#include "collectives/choice.hpp"
#include "collectives/link_privacy.hpp"
#include "parallel/stage_setup.hpp"
#include "sim/engine/collective_runner.hpp"
#include "sim/engine/isolated_run.hpp"
#include "sim/engine/link_events.hpp"
#include "sim/engine/phase_plan.hpp"
#include "sim/engine/platform_builder.hpp"
#include "sim/engine/private_rounds.hpp"
#include "sim/jobs/fabric_part.hpp"
#include "sim/jobs/jobs_trace.hpp"
#include "sim/output/result_json.hpp"
#include "sim/output/safe_file.hpp"
#include "topologies/fabric_loader.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <unistd.h>

namespace memwall::sim::jobs {

namespace sg4 = simgrid::s4u;

namespace {

// What one job needs before the platform exists (its collective, its pairs) and after (its view of
// the platform, its recorder, its runner). Kept at one address: actors hold references into it.
struct JobRun {
  Job placed;               // the job, its GPU ranks those of the simulated part of the fabric
  const Job* job = nullptr; // &placed
  long long index = 0;
  topologies::FabricGraph graph; // the fabric with this job's ranks (job_fabric_graph)
  StepWork work;
  std::vector<collectives::GpuPlace> places;
  collectives::Schedule schedule;   // data parallelism only
  std::vector<bool> private_rounds; // per round of `schedule`: timed without SimGrid messages
  std::vector<std::pair<long long, long long>> pairs; // in the job's ranks
  Platform view; // the shared platform's hosts and routes, in the job's ranks
  std::optional<trace::TraceBuffer> trace;
  std::unique_ptr<RunRecorder> recorder;
  std::unique_ptr<CollectiveRunner> allreduce; // data parallelism only: its chosen collective
  std::unique_ptr<parallel::StageJob> stage_job;
  FaultLog faults;
};

void prepare(JobRun& r, const topologies::FabricGraph& fabric) {
  const Scenario& s = r.job->scenario;
  r.graph = job_fabric_graph(fabric, *r.job);
  r.work = plan_step_work(s);
  r.places = collectives::places_of_ranks(r.graph);
  if (s.grouped_layout()) {
    r.pairs = parallel::parallel_pairs(s, r.places);
    return;
  }
  collectives::CollectiveChoice choice = collectives::choose_collective(
      s.collective, s.ring_order, r.graph, r.work.gradient_bytes, s.channels, s.fabric.nvls_efficiency);
  r.schedule = std::move(choice.schedule);
  for (const auto& round : r.schedule.rounds)
    for (const auto& f : round.flows)
      r.pairs.emplace_back(f.src, f.dst);
}

// The job's view: its hosts in its rank order, the shared platform's routes under its ranks.
void make_view(JobRun& r, const Platform& platform) {
  for (long long g : r.job->gpu_ranks)
    r.view.gpus.push_back(platform.gpus[size_t(g)]);
  r.view.epoch_gpus = {r.view.gpus};
  r.view.epoch_start_s = {0.0};
  r.view.links = platform.links;
  const std::vector<long long>& g = r.job->gpu_ranks;
  for (const auto& [a, b] : r.pairs)
    if (auto route = platform.routes.find({g[size_t(a)], g[size_t(b)]}); route != platform.routes.end())
      r.view.routes.emplace(std::pair{a, b}, route->second);
}

// Creates the job's actors (now: at its start time, from its launcher).
void create_actors(JobRun& r) { parallel::create_stage_actors(*r.stage_job); }

// Which rounds of the data-parallel jobs can be timed without SimGrid messages, and the pairs
// SimGrid must carry. A round is private when it is for its job alone (collectives/link_privacy.hpp)
// and none of its flows crosses a link another job's pairs cross: a link two jobs share carries two
// GPUs' messages whenever their steps meet, which only SimGrid's flow model can share out.
std::vector<std::pair<long long, long long>> carried_pairs(std::deque<JobRun>& runs,
                                                           const collectives::RouteLinks& routes) {
  std::map<uint64_t, long long> link_job;
  std::set<uint64_t> shared;
  auto links_of = [&](const JobRun& r, long long a, long long b) -> const std::vector<uint64_t>* {
    const auto hit = routes.find({r.job->gpu_ranks[size_t(a)], r.job->gpu_ranks[size_t(b)]});
    return hit == routes.end() ? nullptr : &hit->second;
  };
  for (const JobRun& r : runs)
    for (const auto& [a, b] : r.pairs)
      if (const auto* links = links_of(r, a, b))
        for (uint64_t l : *links)
          if (const auto [it, fresh] = link_job.emplace(l, r.index); !fresh && it->second != r.index)
            shared.insert(l);
  std::vector<std::pair<long long, long long>> carried;
  for (JobRun& r : runs) {
    const std::vector<long long>& g = r.job->gpu_ranks;
    if (r.job->scenario.grouped_layout()) { // a grouped layout's rings send every message through SimGrid
      for (const auto& [a, b] : r.pairs)
        carried.emplace_back(g[size_t(a)], g[size_t(b)]);
      continue;
    }
    collectives::RouteLinks own;
    for (const auto& [a, b] : r.pairs)
      if (const auto* links = links_of(r, a, b))
        own[{a, b}] = *links;
    r.private_rounds = collectives::private_rounds(r.schedule, own);
    for (size_t k = 0; k < r.schedule.rounds.size(); ++k) {
      for (const auto& f : r.schedule.rounds[k].flows)
        if (const auto* links = links_of(r, f.src, f.dst))
          for (uint64_t l : *links)
            if (shared.count(l))
              r.private_rounds[k] = false;
      if (!r.private_rounds[k])
        for (const auto& f : r.schedule.rounds[k].flows)
          carried.emplace_back(g[size_t(f.src)], g[size_t(f.dst)]);
    }
  }
  return carried;
}

} // namespace

std::vector<RunResult> run_jobs(const JobsSpec& spec, const std::vector<size_t>& which,
                                const OutputOptions& output) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::unique_ptr<sg4::Engine> engine = create_engine();
  // Only the servers these jobs hold, and what links them (sim/jobs/fabric_part.hpp).
  std::vector<long long> servers;
  for (size_t j : which)
    servers.insert(servers.end(), spec.jobs.at(j).servers.begin(), spec.jobs.at(j).servers.end());
  const FabricPart part = fabric_part(*spec.graph, spec.gpus_per_server, servers);
  const topologies::FabricGraph& fabric = part.graph;
  std::deque<JobRun> runs; // stable addresses
  std::vector<std::pair<long long, long long>> pairs;
  std::vector<double> speeds(topologies::gpu_vertices(fabric).size(), spec.jobs.front().scenario.gpu.peak_flops_per_s);
  long long actors = 0;
  for (size_t j : which) {
    JobRun& r = runs.emplace_back();
    r.placed = spec.jobs.at(j);
    complete_data_parallel_layout(r.placed.scenario);
    for (long long& rank : r.placed.gpu_ranks)
      rank = part.rank[size_t(rank)];
    r.job = &r.placed;
    r.index = static_cast<long long>(j);
    prepare(r, fabric);
    const Scenario& s = r.job->scenario;
    const std::vector<long long>& g = r.job->gpu_ranks;
    for (const auto& [a, b] : r.pairs)
      pairs.emplace_back(g[size_t(a)], g[size_t(b)]);
    const std::vector<double> factors = gpu_speed_factors(s);
    for (size_t rank = 0; rank < g.size(); ++rank)
      speeds[size_t(g[rank])] = factors[rank] * s.gpu.peak_flops_per_s;
    actors += 2 * s.gpus / s.layout.tensor; // a TP group's actor and its stream or pipeline sends, at most
  }
  RouteNeeds needs = [&runs](const collectives::RouteLinks& routes) { return carried_pairs(runs, routes); };
  if (simulate_every_message() || output.tracing()) // a trace lists every message
    needs = nullptr;
  const Platform platform = build_platform(fabric, speeds, pairs, {}, {}, needs);
  guard_stacks(actors);
  for (JobRun& r : runs) {
    const Scenario& s = r.job->scenario;
    make_view(r, platform);
    if (output.tracing())
      r.trace.emplace(output.trace_level, s.gpus);
    r.recorder = std::make_unique<RunRecorder>(s.gpus, s.gpu, r.trace ? &*r.trace : nullptr);
    if (!s.grouped_layout()) {
      r.allreduce = std::make_unique<CollectiveRunner>(
          r.schedule, r.view, *r.recorder, s.fabric.message_latency_s, &r.faults, r.private_rounds);
      r.allreduce->set_job(r.index);
    }
    r.stage_job =
        parallel::plan_stage_job(s, r.work, r.view, *r.recorder, r.places, r.allreduce.get(), r.work.gradient_bytes);
    if (r.job->start_s > 0) // its GPUs start later: a launcher creates them then
      sg4::Actor::create("job-start", r.view.gpus.front(), [&r] {
        sg4::this_actor::sleep_until(r.job->start_s);
        create_actors(r);
      });
    else
      create_actors(r);
  }
  engine->run();
  std::vector<RunResult> results;
  for (JobRun& r : runs) {
    const Scenario& s = r.job->scenario;
    RunResult result;
    result.per_gpu = r.recorder->totals();
    try {
      check_run_complete(result.per_gpu, r.faults);
    } catch (const std::exception& e) {
      throw std::runtime_error("job '" + s.name + "': " + e.what());
    }
    for (GpuTotals& t : result.per_gpu) { // counted from the job's start
      t.finish_time_s -= r.job->start_s;
      result.makespan_s = std::max(result.makespan_s, t.finish_time_s);
      result.activities += t.activities;
    }
    result.metrics = summarise_run(s, result.per_gpu, result.makespan_s);
    result.collective = s.grouped_layout() ? "ring" : r.schedule.algorithm;
    results.push_back(std::move(result));
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  for (RunResult& result : results) // the simulation's, shared by its jobs
    result.sim_wall_s = wall_s;
  if (output.tracing()) { // each job's rows tile its own time, from its start to its last GPU's end
    std::vector<JobTrace> traces;
    for (size_t i = 0; i < runs.size(); ++i) {
      JobRun& r = runs[i];
      r.recorder->close_run(r.job->start_s + results[i].makespan_s, r.job->scenario.layout.pipeline > 1
                                                                        ? trace::TracePhase::PipelineWait
                                                                        : trace::TracePhase::Wait);
      traces.push_back({size_t(r.index), &results[i], r.recorder.get(), &*r.trace});
    }
    export_jobs_trace(spec, traces, output);
  }
  return results;
}

namespace {

std::function<nlohmann::json()> jobs_work(const JobsSpec& spec, std::vector<size_t> which,
                                          const OutputOptions& output = {}) {
  return [&spec, which, output] {
    const std::vector<RunResult> results = run_jobs(spec, which, output);
    nlohmann::json records = nlohmann::json::array();
    for (size_t i = 0; i < which.size(); ++i)
      records.push_back(result_to_json(spec.jobs[which[i]].scenario, results[i]));
    return records;
  };
}

} // namespace

std::vector<nlohmann::json> run_jobs_isolated(const JobsSpec& spec, const std::vector<size_t>& which) {
  const nlohmann::json reply = run_forked(spec.file, jobs_work(spec, which));
  return std::vector<nlohmann::json>(reply.begin(), reply.end());
}

nlohmann::json run_jobs_with_baselines(const JobsSpec& spec, const OutputOptions& final_output) {
  const auto wall_start = std::chrono::steady_clock::now();
  // The shared run writes its trace under staged names, moved into place once every simulation has
  // succeeded: a failed baseline leaves no complete-looking trace behind.
  OutputOptions output = final_output;
  for (std::string* path : {&output.trace_path, &output.timeline_path})
    if (!path->empty())
      *path = output::temporary_path(*path, long(::getpid())) + ".staged";
  struct Staged {
    std::vector<std::pair<std::string, std::string>> files; // staged, final
    bool keep = false;
    ~Staged() {
      for (const auto& [staged, final_path] : files)
        if (!keep)
          std::remove(staged.c_str());
    }
  } staged;
  staged.files = {{output.trace_path, final_output.trace_path},
                  {output.timeline_path, final_output.timeline_path}};
  // Simulations: all jobs together, then each alone; as many at once as there are cores.
  std::vector<std::vector<size_t>> sets(1);
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    sets.front().push_back(j);
    sets.push_back({j});
  }
  // MEMWALL_JOBS_AT_ONCE=N caps it (bench/jobs/run.sh times the shared run by itself with 1).
  size_t at_once = std::max(1u, std::thread::hardware_concurrency());
  if (const char* cap = std::getenv("MEMWALL_JOBS_AT_ONCE"); cap && std::atoi(cap) > 0)
    at_once = static_cast<size_t>(std::atoi(cap));
  std::vector<nlohmann::json> replies(sets.size());
  std::deque<std::pair<size_t, ForkedRun>> running;
  for (size_t next = 0; next < sets.size() || !running.empty();) {
    if (next < sets.size() && running.size() < at_once) {
      running.emplace_back(next,
                           start_forked(jobs_work(spec, sets[next], next == 0 ? output : OutputOptions{})));
      ++next;
      continue;
    }
    const auto [index, child] = running.front();
    running.pop_front();
    const std::string label =
        spec.file + (index == 0 ? "" : " (job '" + spec.jobs[sets[index].front()].scenario.name + "' alone)");
    replies[index] = finish_forked(label, child);
  }
  for (const auto& [staged_path, final_path] : staged.files)
    if (!staged_path.empty() && std::rename(staged_path.c_str(), final_path.c_str()) != 0)
      throw std::runtime_error(spec.file + ": cannot move the finished " + final_path + " into place");
  staged.keep = true;
  nlohmann::json out;
  out["name"] = spec.name;
  out["gpus"] = spec.gpus;
  double alone_wall_s = 0;
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    const Job& job = spec.jobs[j];
    nlohmann::json record = replies[0][j];
    const nlohmann::json& alone = replies[j + 1][0];
    const double alone_s = alone["step_time_s"].get<double>();
    alone_wall_s += alone["sim_wall_s"].get<double>();
    record["job"] = job.scenario.name;
    record["placement"] = placement_name(job.placement);
    record["servers"] = job.servers;
    record["start_s"] = job.start_s;
    record["alone_step_time_s"] = alone_s;
    record["slowdown"] = record["step_time_s"].get<double>() / alone_s;
    out["jobs"].push_back(std::move(record));
  }
  out["cluster"] =
      cluster_figures(spec, sets.front(), std::vector<nlohmann::json>(replies[0].begin(), replies[0].end()));
  // host wall-clock seconds: the shared simulation, the baselines, the whole (at once)
  out["cluster"]["sim_wall_s"] = {
      {"together", replies[0][0]["sim_wall_s"].get<double>()},
      {"alone", alone_wall_s},
      {"total", std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count()}};
  return out;
}

} // namespace memwall::sim::jobs
