#include "sim/jobs/jobs_run.hpp"

#include "collectives/channels.hpp"
#include "collectives/choice.hpp"
#include "parallel/stage_setup.hpp"
#include "sim/engine/collective_runner.hpp"
#include "sim/engine/comm_actor.hpp"
#include "sim/engine/gpu_actor.hpp"
#include "sim/engine/isolated_run.hpp"
#include "sim/engine/link_events.hpp"
#include "sim/engine/phase_plan.hpp"
#include "sim/engine/platform_builder.hpp"
#include "sim/output/result_json.hpp"
#include "topologies/fabric_loader.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <deque>
#include <memory>
#include <stdexcept>

namespace memwall::sim::jobs {

namespace sg4 = simgrid::s4u;

namespace {

// What one job needs before the platform exists (its collective, its pairs) and after (its view of
// the platform, its recorder, its runner). Kept at one address: actors hold references into it.
struct JobRun {
  const Job* job = nullptr;
  long long index = 0;
  topologies::FabricGraph graph; // the fabric with this job's ranks (job_fabric_graph)
  StepWork work;
  std::vector<collectives::GpuPlace> places;
  collectives::Schedule schedule; // data parallelism only
  std::vector<std::pair<long long, long long>> pairs; // in the job's ranks
  Platform view;                  // the shared platform's hosts and routes, in the job's ranks
  std::unique_ptr<RunRecorder> recorder;
  std::unique_ptr<CollectiveRunner> allreduce;
  std::vector<CommQueue> streams;
  std::unique_ptr<parallel::StageJob> stage_job;
  FaultLog faults;
};

void prepare(JobRun& r, const topologies::FabricGraph& fabric) {
  const Scenario& s = r.job->scenario;
  r.graph = job_fabric_graph(fabric, *r.job);
  r.work = plan_step_work(s);
  r.places = collectives::places_of_ranks(r.graph);
  if (s.layout.model_parallel()) {
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
  r.view.pj_per_bit = platform.pj_per_bit;
  r.view.link_class = platform.link_class;
  const std::vector<long long>& g = r.job->gpu_ranks;
  for (const auto& [a, b] : r.pairs)
    if (auto route = platform.routes.find({g[size_t(a)], g[size_t(b)]}); route != platform.routes.end())
      r.view.routes.emplace(std::pair{a, b}, route->second);
}

// Creates the job's actors (now: at its start time, from its launcher).
void create_actors(JobRun& r) {
  const Scenario& s = r.job->scenario;
  if (s.layout.model_parallel()) {
    parallel::create_stage_actors(*r.stage_job);
    return;
  }
  for (long long rank = 0; rank < s.gpus; ++rank) {
    sg4::Host* host = r.view.gpus[size_t(rank)];
    CommQueue* queue = r.streams.empty() ? nullptr : &r.streams[size_t(rank)];
    sg4::Actor::create(host->get_name(), host, GpuActor(rank, s, r.work, *r.allreduce, *r.recorder, queue));
    if (queue)
      sg4::Actor::create(host->get_name() + "-comm", host, CommActor(rank, *r.allreduce, *queue));
  }
}

} // namespace

std::vector<RunResult> run_jobs(const JobsSpec& spec, const std::vector<size_t>& which) {
  const std::unique_ptr<sg4::Engine> engine = create_engine();
  const topologies::FabricGraph fabric = topologies::build_fabric_graph(spec.fabric, spec.gpus);
  std::deque<JobRun> runs; // stable addresses
  std::vector<std::pair<long long, long long>> pairs;
  std::vector<double> speeds(size_t(spec.gpus), spec.jobs.front().scenario.gpu.peak_flops_per_s);
  long long actors = 0;
  for (size_t j : which) {
    JobRun& r = runs.emplace_back();
    r.job = &spec.jobs.at(j);
    r.index = static_cast<long long>(j);
    prepare(r, fabric);
    const Scenario& s = r.job->scenario;
    const std::vector<long long>& g = r.job->gpu_ranks;
    for (const auto& [a, b] : r.pairs)
      pairs.emplace_back(g[size_t(a)], g[size_t(b)]);
    const std::vector<double> factors = gpu_speed_factors(s);
    for (size_t rank = 0; rank < g.size(); ++rank)
      speeds[size_t(g[rank])] = factors[rank] * s.gpu.peak_flops_per_s;
    actors += s.layout.model_parallel() ? 2 * s.gpus / s.layout.tensor
                                        : s.gpus * (s.training.overlap_bucketed ? 2 : 1);
  }
  // Every pair SimGrid carries: no round is timed without messages, since another job's flows may
  // cross any link (collectives/link_privacy.hpp holds for one job alone).
  const Platform platform = build_platform(fabric, speeds, pairs);
  guard_stacks(actors);
  for (JobRun& r : runs) {
    const Scenario& s = r.job->scenario;
    make_view(r, platform);
    r.recorder = std::make_unique<RunRecorder>(s.gpus, s.gpu, nullptr);
    if (s.layout.model_parallel()) {
      r.stage_job = parallel::plan_stage_job(s, r.work, r.view, *r.recorder, r.places);
    } else {
      r.allreduce = std::make_unique<CollectiveRunner>(r.schedule, r.view, *r.recorder, s.fabric.message_latency_s,
                                                       &r.faults);
      r.allreduce->set_job(r.index);
      r.streams.resize(s.training.overlap_bucketed ? size_t(s.gpus) : 0);
    }
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
    result.collective = s.layout.model_parallel() ? "ring" : r.schedule.algorithm;
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<nlohmann::json> run_jobs_isolated(const JobsSpec& spec, const std::vector<size_t>& which) {
  const nlohmann::json reply = run_forked(spec.file, [&] {
    const std::vector<RunResult> results = run_jobs(spec, which);
    nlohmann::json records = nlohmann::json::array();
    for (size_t i = 0; i < which.size(); ++i)
      records.push_back(result_to_json(spec.jobs[which[i]].scenario, results[i]));
    return records;
  });
  return std::vector<nlohmann::json>(reply.begin(), reply.end());
}

nlohmann::json run_jobs_with_baselines(const JobsSpec& spec) {
  std::vector<size_t> all(spec.jobs.size());
  for (size_t j = 0; j < all.size(); ++j)
    all[j] = j;
  std::vector<nlohmann::json> together = run_jobs_isolated(spec, all);
  nlohmann::json out;
  out["name"] = spec.name;
  out["gpus"] = spec.gpus;
  double busy_gpus = 0, tokens_per_s = 0, energy_j = 0, end_s = 0;
  for (size_t j = 0; j < all.size(); ++j) {
    const Job& job = spec.jobs[j];
    nlohmann::json record = std::move(together[j]);
    const nlohmann::json alone = run_jobs_isolated(spec, {j}).front();
    const double step_s = record["step_time_s"].get<double>();
    const double alone_s = alone["step_time_s"].get<double>();
    record["job"] = job.scenario.name;
    record["placement"] = placement_name(job.placement);
    record["servers"] = job.servers;
    record["start_s"] = job.start_s;
    record["alone_step_time_s"] = alone_s;
    record["slowdown"] = step_s / alone_s;
    busy_gpus += double(job.scenario.gpus);
    tokens_per_s += record["tokens_per_s_per_gpu"].get<double>() * double(job.scenario.gpus);
    const double steps_s = step_s * double(job.scenario.steps);
    energy_j += record["energy_j"].get<double>() * double(job.scenario.gpus) * double(job.scenario.steps);
    end_s = std::max(end_s, job.start_s + steps_s);
    out["jobs"].push_back(std::move(record));
  }
  out["cluster"] = {{"gpus_busy", busy_gpus},
                    {"gpus", spec.gpus},
                    {"tokens_per_s", tokens_per_s},
                    {"gpu_energy_j", energy_j},
                    {"makespan_s", end_s}};
  return out;
}

} // namespace memwall::sim::jobs
