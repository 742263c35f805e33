#include "sim/jobs/jobs_spec.hpp"

#include "model/input_error.hpp"
#include "model/input_node.hpp"
#include "sim/scenario/power_keys.hpp"
#include "topologies/fabric_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <cstdio>
#include <iterator>

namespace memwall::sim::jobs {

using model::InputNode;

bool is_jobs_file(const std::string& path) {
  try {
    const InputNode root = InputNode::load_file(path);
    return root.is_map() && root.has("jobs");
  } catch (const std::exception&) {
    return false; // not readable as YAML: the scenario loader says why
  }
}

const char* placement_name(Placement p) {
  switch (p) {
  case Placement::Packed:
    return "packed";
  case Placement::Spread:
    return "spread";
  case Placement::Random:
    return "random";
  case Placement::Explicit:
    return "explicit";
  }
  return "?";
}

namespace {

Placement parse_placement(const InputNode& node) {
  const std::string p = node.as_one_of({"packed", "spread", "random", "explicit"});
  return p == "packed"   ? Placement::Packed
         : p == "spread" ? Placement::Spread
         : p == "random" ? Placement::Random
                         : Placement::Explicit;
}

// One item of `jobs:`: inline scenario keys, or `base:` a scenario file with a few keys changed.
PlacementUnit parse_unit(const InputNode& node, const JobsSpec& spec) {
  const std::string unit = node.as_one_of({"server", "leaf", "pod"});
  if (unit != "server" && spec.leaves == 0)
    node.fail("this fabric has no leaf switches (no NIC links from its servers): place by server");
  return unit == "leaf" ? PlacementUnit::Leaf : unit == "pod" ? PlacementUnit::Pod : PlacementUnit::Server;
}

Job parse_job(const InputNode& item, size_t index, const SharedFabric& shared, Placement default_placement,
              PlacementUnit default_unit, const JobsSpec& spec, const model::GpuCatalog& catalog) {
  item.require_map();
  Job job;
  job.line = item.line();
  job.placement = default_placement;
  job.unit = default_unit;
  if (auto base = item.optional_child("base")) {
    item.check_keys({"base", "name", "steps", "placement", "placement_unit", "servers", "start"});
    std::filesystem::path path = base->as_string();
    if (path.is_relative())
      path = std::filesystem::path(item.file()).parent_path() / path;
    SharedFabric own = shared;
    own.replace_own = true;
    const InputNode root = [&] {
      try {
        return InputNode::load_file(path.string());
      } catch (const model::InputError& e) { // unreadable or not YAML: said at the job's base key
        base->fail(std::string("cannot use the job's base scenario: ") + model::printable(e.what(), 300));
      }
    }();
    job.scenario = parse_scenario(root, catalog, nullptr, &own);
    for (const auto key : kJobKeys) // the job's keys are the jobs file's, not its base's
      if (root.has(std::string(key)))
        root.child(std::string(key))
            .fail("a base scenario of a job takes no '" + std::string(key) +
                  "': give it in the jobs file's item");
    if (auto steps = item.optional_child("steps"))
      job.scenario.steps = steps->as_count(kMaxSteps, "steps");
  } else {
    job.scenario = parse_scenario(item, catalog, nullptr, &shared);
  }
  job.scenario.name = item.has("name") ? item.child("name").as_string() : "job " + std::to_string(index + 1);
  if (auto p = item.optional_child("placement"))
    job.placement = parse_placement(*p);
  if (auto u = item.optional_child("placement_unit")) {
    job.unit = parse_unit(*u, spec);
    if (job.placement == Placement::Explicit)
      u->fail("an explicit placement lists its servers: placement_unit does not apply");
  }
  if (auto servers = item.optional_child("servers")) {
    if (job.placement != Placement::Explicit)
      servers->fail("servers: lists where an explicit placement puts the job; this job's placement is " +
                    std::string(placement_name(job.placement)));
    for (const InputNode& s : servers->elements())
      job.servers.push_back(s.as_non_negative_integer());
  } else if (job.placement == Placement::Explicit) {
    item.fail("placement: explicit needs the job's servers: [..] list");
  }
  if (auto start = item.optional_child("start"))
    job.start_s = start->as_non_negative_quantity(model::Dimension::Time);
  return job;
}

// Each server's leaf group: the switches its GPUs' NIC links reach (through its NVLink switch where
// the NICs are the server's), the same set for every server of a group. Rail-optimised: a server
// meets one leaf per rail; servers on the same leaves form a group.
void leaf_groups(JobsSpec& spec, const topologies::FabricGraph& graph) {
  using topologies::NodeKind;
  const long long servers = spec.gpus / spec.gpus_per_server;
  std::vector<std::set<size_t>> leaves(static_cast<size_t>(servers));
  for (const auto gpu : topologies::gpu_vertices(graph)) {
    const auto server = static_cast<size_t>(graph[gpu].gpu_rank / spec.gpus_per_server);
    std::vector<size_t> near{gpu}; // the GPU, and the switches its NVLink links reach
    for (auto [e, end] = boost::out_edges(gpu, graph); e != end; ++e)
      if (graph[*e].link_class == "nvlink" && graph[boost::target(*e, graph)].kind != NodeKind::Gpu)
        near.push_back(boost::target(*e, graph));
    for (const size_t v : near)
      for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e)
        if (graph[*e].link_class == "nic" && graph[boost::target(*e, graph)].kind == NodeKind::Switch)
          leaves[server].insert(boost::target(*e, graph));
  }
  std::map<std::set<size_t>, long long> group;
  for (const auto& set : leaves) {
    if (set.empty()) { // a server without NIC links: the fabric has no leaves to place by
      spec.leaves = 0;
      spec.leaf_of_server.clear();
      return;
    }
    const auto [it, fresh] = group.emplace(set, static_cast<long long>(group.size()));
    spec.leaf_of_server.push_back(it->second);
  }
  spec.leaves = static_cast<long long>(group.size());
  // Pods: leaves that a switch above them (a spine: linked to a leaf, not a leaf itself) joins, and a
  // server's leaves (one per rail), merged. Switches above the spines (a three-tier fabric's cores)
  // link no leaf, so pods stay apart.
  std::map<size_t, size_t> parent; // union-find over leaf vertices
  for (const auto& set : leaves)
    for (size_t l : set)
      parent.emplace(l, l);
  auto root = [&parent](size_t v) {
    while (parent.at(v) != v)
      v = parent[v] = parent.at(parent.at(v));
    return v;
  };
  auto join = [&](size_t a, size_t b) { parent[root(a)] = root(b); };
  std::map<size_t, size_t> spine_leaf; // a spine's first leaf
  for (const auto& [leaf, unused] : std::map<size_t, size_t>(parent))
    for (auto [e, end] = boost::out_edges(leaf, graph); e != end; ++e) {
      const size_t above = boost::target(*e, graph);
      if (graph[above].kind != NodeKind::Switch || parent.count(above) || graph[*e].link_class == "nic")
        continue; // a GPU, a leaf, or a server's NVLink switch behind its NIC
      if (const auto [it, fresh] = spine_leaf.emplace(above, leaf); !fresh)
        join(leaf, it->second);
    }
  for (const auto& set : leaves)
    for (size_t l : set)
      join(l, *set.begin());
  std::map<size_t, long long> pod;
  for (const auto& set : leaves) {
    const auto [it, fresh] = pod.emplace(root(*set.begin()), static_cast<long long>(pod.size()));
    spec.pod_of_server.push_back(it->second);
  }
  spec.pods = static_cast<long long>(pod.size());
}

// A job's servers by leaf (or pod: `group_of_server`): whole free leaves (packed: the lowest; random:
// shuffled), every server of them reserved for the job; or spread: one free server from each leaf in turn.
std::vector<long long> place_by_group(const std::vector<long long>& group_of_server, long long groups,
                                      const Job& job, long long k, std::vector<long long>& owner, long long j,
                                      std::mt19937_64& random) {
  std::vector<std::vector<long long>> by_group(static_cast<size_t>(groups));
  for (size_t s = 0; s < group_of_server.size(); ++s)
    by_group[size_t(group_of_server[s])].push_back(static_cast<long long>(s));
  std::vector<long long> chosen;
  if (job.placement == Placement::Spread) {
    for (bool more = true; more && static_cast<long long>(chosen.size()) < k;) {
      more = false;
      for (auto& servers : by_group) {
        auto free = std::find_if(servers.begin(), servers.end(), [&](long long s) { return owner[size_t(s)] < 0; });
        if (free == servers.end() || static_cast<long long>(chosen.size()) == k)
          continue;
        owner[size_t(*free)] = j;
        chosen.push_back(*free);
        more = true;
      }
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }
  std::vector<size_t> free_leaves;
  for (size_t l = 0; l < by_group.size(); ++l)
    if (std::all_of(by_group[l].begin(), by_group[l].end(), [&](long long s) { return owner[size_t(s)] < 0; }))
      free_leaves.push_back(l);
  if (job.placement == Placement::Random)
    std::shuffle(free_leaves.begin(), free_leaves.end(), random);
  for (size_t l : free_leaves) {
    if (static_cast<long long>(chosen.size()) >= k)
      break;
    for (long long s : by_group[l]) {
      owner[size_t(s)] = j; // the whole leaf is the job's
      if (static_cast<long long>(chosen.size()) < k)
        chosen.push_back(s);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// Servers, in placement order: explicit jobs first (they name theirs), then the others in file order.
void place(JobsSpec& spec, const InputNode& list) {
  const long long servers = spec.gpus / spec.gpus_per_server;
  std::vector<long long> owner(static_cast<size_t>(servers), -1);
  const std::vector<InputNode> items = list.elements();
  auto needed = [&](const Job& job) {
    const long long g = job.scenario.gpus, per = spec.gpus_per_server;
    if (g > per && g % per != 0)
      items[&job - spec.jobs.data()].child("cluster").child("gpus").fail(
          "a job takes whole servers: " + std::to_string(g) + " GPUs is not a multiple of the fabric's " +
          std::to_string(per) + " GPUs per server");
    return (g + per - 1) / per;
  };
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    Job& job = spec.jobs[j];
    if (job.placement != Placement::Explicit)
      continue;
    const InputNode node = items[j].child("servers");
    if (static_cast<long long>(job.servers.size()) != needed(job))
      node.fail("the job's " + std::to_string(job.scenario.gpus) + " GPUs take " +
                std::to_string(needed(job)) + " servers; the list names " +
                std::to_string(job.servers.size()));
    for (long long s : job.servers) {
      if (s >= servers)
        node.fail("server " + std::to_string(s) + " does not exist (the fabric has " +
                  std::to_string(servers) + ")");
      if (owner[size_t(s)] >= 0)
        node.fail("server " + std::to_string(s) + " is " +
                  (size_t(owner[size_t(s)]) == j
                       ? "listed twice"
                       : "also in job '" + spec.jobs[size_t(owner[size_t(s)])].scenario.name + "'"));
      owner[size_t(s)] = static_cast<long long>(j);
    }
  }
  std::mt19937_64 random(spec.seed);
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    Job& job = spec.jobs[j];
    if (job.placement == Placement::Explicit)
      continue;
    std::vector<long long> free;
    for (long long s = 0; s < servers; ++s)
      if (owner[size_t(s)] < 0)
        free.push_back(s);
    const long long k = needed(job);
    if (job.unit != PlacementUnit::Server) {
      const bool by_pod = job.unit == PlacementUnit::Pod;
      const long long groups = by_pod ? spec.pods : spec.leaves;
      const std::string unit = by_pod ? "pod" : "leaf", units = by_pod ? "pods" : "leaves";
      job.servers = place_by_group(by_pod ? spec.pod_of_server : spec.leaf_of_server, groups, job, k, owner,
                                   static_cast<long long>(j), random);
      if (static_cast<long long>(job.servers.size()) < k)
        items[j].child("cluster").child("gpus").fail(
            "the job needs " + std::to_string(k) + (k == 1 ? " server; " : " servers; ") +
            (job.placement == Placement::Spread ? "fewer are free" : "fewer are on whole free " + units) +
            " once the jobs before it are placed (the fabric has " + std::to_string(groups) + " " +
            (groups == 1 ? unit : units) + " of " + std::to_string(servers / groups) + " servers)");
      continue;
    }
    if (k > static_cast<long long>(free.size()))
      items[j].child("cluster").child("gpus").fail(
          "the job needs " + std::to_string(k) + (k == 1 ? " server; " : " servers; ") + std::to_string(free.size()) +
          " of the fabric's " + std::to_string(servers) + " are free once the jobs before it are placed");
    if (job.placement == Placement::Packed) {
      job.servers.assign(free.begin(), free.begin() + k);
    } else if (job.placement == Placement::Spread) { // evenly spaced over the free servers
      for (long long i = 0; i < k; ++i)
        job.servers.push_back(free[size_t(i * static_cast<long long>(free.size()) / k)]);
    } else {
      std::shuffle(free.begin(), free.end(), random);
      job.servers.assign(free.begin(), free.begin() + k);
      std::sort(job.servers.begin(), job.servers.end());
    }
    for (long long s : job.servers)
      owner[size_t(s)] = static_cast<long long>(j);
  }
  for (Job& job : spec.jobs) // a job smaller than a server uses its server's first GPUs
    for (long long r = 0; r < job.scenario.gpus; ++r)
      job.gpu_ranks.push_back(job.servers[size_t(r / spec.gpus_per_server)] * spec.gpus_per_server +
                              r % spec.gpus_per_server);
}

} // namespace

JobsSpec load_jobs(const std::string& path, const model::GpuCatalog& catalog) {
  return parse_jobs(InputNode::load_file(path), catalog);
}

JobsSpec parse_jobs(const InputNode& root, const model::GpuCatalog& catalog) {
  const std::string& path = root.file();
  root.check_keys({"name", "cluster", "placement", "placement_unit", "seed", "jobs"});
  JobsSpec spec;
  spec.file = path;
  spec.name = root.has("name") ? root.child("name").as_string() : std::filesystem::path(path).stem().string();
  const InputNode cluster = root.child("cluster");
  if (cluster.has("link_events"))
    cluster.child("link_events").fail("link events with several jobs are not modelled");
  cluster.check_keys({"gpus", "fabric"});
  spec.gpus = cluster.child("gpus").as_count(kMaxGpus, "GPUs");
  SharedFabric shared;
  shared.fabric = topologies::parse_fabric(cluster.child("fabric"));
  spec.graph = std::make_shared<const topologies::FabricGraph>(topologies::build_fabric_graph(shared.fabric, spec.gpus));
  const topologies::FabricGraph& graph = *spec.graph;
  shared.inventory = fabric_inventory(graph, spec.gpus);
  spec.fabric = shared.fabric;
  spec.gpus_per_server = topologies::gpus_per_node(graph);
  leaf_groups(spec, graph);
  const Placement placement =
      root.has("placement") ? parse_placement(root.child("placement")) : Placement::Packed;
  if (placement == Placement::Explicit)
    root.child("placement").fail("explicit placement is per job (each job's servers: [..])");
  const PlacementUnit unit =
      root.has("placement_unit") ? parse_unit(root.child("placement_unit"), spec) : PlacementUnit::Server;
  if (auto seed = root.optional_child("seed"))
    spec.seed = static_cast<unsigned long long>(seed->as_non_negative_integer());
  const InputNode list = root.child("jobs");
  if (!list.is_sequence() || list.elements().empty())
    list.fail("expected a non-empty list of jobs (each a scenario, inline or base: FILE)");
  std::set<std::string> names;
  const std::vector<InputNode> items = list.elements();
  for (size_t j = 0; j < items.size(); ++j) {
    spec.jobs.push_back(parse_job(items[j], j, shared, placement, unit, spec, catalog));
    const Scenario& s = spec.jobs.back().scenario;
    if (!names.insert(s.name).second)
      (items[j].has("name") ? items[j].child("name") : items[j]).fail("two jobs are named '" + s.name + "'");
    for (const auto& w : s.warnings)
      spec.warnings.push_back(w);
  }
  place(spec, list);
  return spec;
}

namespace {

const char* const kClusterColumns[] = {"gpus_busy", "tokens_per_s", "gpu_energy_j", "makespan_s"};
const char* const kJobColumns[] = {"name", "gpus", "step_time_s", "alone_step_time_s", "slowdown",
                                   "tokens_per_s_per_gpu"};

} // namespace

std::vector<std::string> sweep_jobs_columns(size_t jobs) {
  std::vector<std::string> columns(std::begin(kClusterColumns), std::end(kClusterColumns));
  for (size_t j = 1; j <= jobs; ++j)
    for (const char* c : kJobColumns)
      columns.push_back("job" + std::to_string(j) + "_" + c);
  return columns;
}

std::vector<std::string> sweep_jobs_cells(const nlohmann::json* result, size_t jobs) {
  std::vector<std::string> cells;
  auto cell = [](const nlohmann::json& v) {
    if (v.is_string())
      return v.get<std::string>();
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v.get<double>());
    return std::string(text);
  };
  for (const char* c : kClusterColumns)
    cells.push_back(result ? cell(result->at("cluster").at(c)) : "");
  for (size_t j = 0; j < jobs; ++j)
    for (const char* c : kJobColumns) {
      const bool has = result && j < result->at("jobs").size();
      cells.push_back(has ? cell(result->at("jobs")[j].at(std::string(c) == "name" ? "job" : c)) : "");
    }
  return cells;
}

topologies::FabricGraph job_fabric_graph(const topologies::FabricGraph& fabric, const Job& job) {
  topologies::FabricGraph graph = fabric;
  std::map<long long, long long> rank_of; // fabric rank -> job rank
  for (size_t r = 0; r < job.gpu_ranks.size(); ++r)
    rank_of[job.gpu_ranks[r]] = static_cast<long long>(r);
  // Its servers 0..k-1 in its rank order: whole servers, or the first GPUs of one.
  const long long per_server =
      static_cast<long long>(job.gpu_ranks.size() / std::max<size_t>(1, job.servers.size()));
  for (auto [v, end] = boost::vertices(graph); v != end; ++v) {
    topologies::FabricNode& node = graph[*v];
    if (node.kind != topologies::NodeKind::Gpu)
      continue;
    if (auto hit = rank_of.find(node.gpu_rank); hit != rank_of.end()) {
      node.gpu_rank = hit->second;
      node.node = hit->second / per_server;
      node.local_rank = hit->second % per_server;
    } else { // another job's GPU, or an idle one: it still forwards where the fabric routes through GPUs
      node.kind = topologies::NodeKind::Switch;
      node.gpu_rank = node.node = node.local_rank = -1;
    }
  }
  return graph;
}

} // namespace memwall::sim::jobs
