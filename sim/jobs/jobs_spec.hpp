// A jobs file: several training jobs on one fabric (issue 32). Each job is a scenario of its own
// (inline, or `base:` a scenario file) placed on whole servers of the shared fabric. Pure parsing,
// validation and placement: no SimGrid here (sim/jobs/jobs_run.hpp simulates them).
#pragma once

#include "sim/scenario/scenario.hpp"
#include "topologies/fabric_graph.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace memwall::sim::jobs {

// packed: each job takes the lowest free servers, so its traffic stays inside as few leaves as it
// can; spread: a job's servers are spaced evenly over the free ones (jobs interleave); random: a
// seeded shuffle of the free servers; explicit: the job's `servers:` list.
enum class Placement { Packed, Spread, Random, Explicit };

// What a placement counts in: servers, leaves (the servers whose NICs meet the same leaf switches) or
// pods (the leaves joined by the same spine switches: a three-tier fat-tree's pods; a two-tier fabric
// is one pod). By leaf or pod, packed and random give a job whole leaves (pods) to itself (servers it
// does not use stay idle), and spread takes one server from each leaf (pod) in turn.
enum class PlacementUnit { Server, Leaf, Pod };

struct Job {
  Scenario scenario; // its own GPUs (scenario.gpus), layout, steps; the shared fabric
  Placement placement = Placement::Packed;
  PlacementUnit unit = PlacementUnit::Server;
  std::vector<long long> servers;   // the servers it runs on, in its rank order
  std::vector<long long> gpu_ranks; // fabric GPU rank of each of its ranks (its rank r on gpu_ranks[r])
  double start_s = 0;               // when its GPUs start their first step
  int line = 0;                     // of its item in the jobs file
};

struct JobsSpec {
  std::string name;
  std::string file;
  long long gpus = 0; // the fabric's GPUs
  long long gpus_per_server = 1;
  topologies::FabricSpec fabric;
  std::shared_ptr<const topologies::FabricGraph> graph; // the fabric built for `gpus`, shared by every run
  unsigned long long seed = 0; // for random placement
  std::vector<long long> leaf_of_server; // each server's leaf group (servers on the same leaf switches)
  long long leaves = 0; // leaf groups; 0 when the fabric has no NIC links to leaves
  std::vector<long long> pod_of_server;  // each server's pod (leaves linked through the same spines)
  long long pods = 0;                    // 0 when the fabric has no leaves
  std::vector<Job> jobs;
  std::vector<std::string> warnings;
};

// Whether a YAML file is a jobs file (a map with a top-level `jobs:`), without validating it.
bool is_jobs_file(const std::string& path);

// Reads, validates and places. Bad input: model::InputError naming file, line and key.
JobsSpec load_jobs(const std::string& path, const model::GpuCatalog& catalog);
// The same from a parsed file (a sweep's point: sim/cli/sweep_command.cpp).
JobsSpec parse_jobs(const model::InputNode& root, const model::GpuCatalog& catalog);

// A sweep over a jobs file has these result columns after its swept keys: the cluster's figures,
// then per job (in file order, `job1_` ...) its name and figures (sweep_jobs_cells fills them).
std::vector<std::string> sweep_jobs_columns(size_t jobs);
std::vector<std::string> sweep_jobs_cells(const nlohmann::json* result, size_t jobs);

const char* placement_name(Placement placement);

// The fabric as job `job` sees it: its GPUs renumbered 0..n-1 in its rank order, its servers 0..k-1,
// every other GPU a forwarding node (no rank). Vertices, links and their names are the fabric's, so
// routes found on it are routes of the shared platform.
topologies::FabricGraph job_fabric_graph(const topologies::FabricGraph& fabric, const Job& job);

} // namespace memwall::sim::jobs
