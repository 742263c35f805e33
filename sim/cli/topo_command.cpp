#include "commands.hpp"

#include "collectives/channels.hpp"
#include "collectives/choice.hpp"
#include "model/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "topologies/fabric_loader.hpp"
#include "topologies/fabric_summary.hpp"

#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>

namespace memwall::cli {

namespace {

// GPUs a fabric file implies by itself (torus, graph), or 0.
long long implied_gpus(const topologies::FabricSpec& spec) {
  if (spec.kind == "torus") {
    long long n = 1;
    for (long long d : spec.torus.dims)
      n *= d;
    return n;
  }
  if (spec.kind == "dragonfly")
    return spec.dragonfly.groups * spec.dragonfly.routers_per_group * spec.dragonfly.gpus_per_router;
  if (spec.kind == "graph") {
    long long n = 0;
    for (const auto& node : spec.graph.nodes)
      n += node.kind == "gpu";
    return n;
  }
  return 0;
}

} // namespace

int topo_command(const TopoOptions& options) {
  topologies::FabricSpec spec;
  long long gpus = options.gpus;
  long long channels = 0; // a scenario's, else the fabric's default
  try {
    const model::InputNode root = model::InputNode::load_file(options.file);
    if (root.is_map() && root.has("cluster")) { // a scenario: its fabric and GPU count
      const sim::Scenario s = sim::parse_scenario(root, model::GpuCatalog::builtin());
      spec = s.fabric;
      gpus = gpus > 0 ? gpus : s.gpus;
      channels = s.channels;
    } else {
      spec = topologies::parse_fabric(root);
    }
    if (gpus <= 0)
      gpus = implied_gpus(spec);
    if (gpus <= 0)
      throw model::InputError(options.file, 0, "", "a " + spec.kind + " fabric needs --gpus N");
    const topologies::FabricGraph graph = topologies::build_fabric_graph(spec, gpus);
    std::cout << "fabric " << (spec.name.empty() ? options.file : spec.name) << " (" << spec.kind << ")\n";
    // The summary (its hop diameter: a breadth-first sweep per 256 GPUs of distinct neighbours, 6 s
    // of a rail-optimised fabric at 131,072 GPUs) reads the graph only: it runs beside the
    // collectives' estimates, whose route search keeps one core.
    const std::launch policy = gpus >= 4096 ? std::launch::async : std::launch::deferred;
    std::future<topologies::FabricSummary> summary =
        std::async(policy, [&] { return topologies::summarise_fabric(graph); });
    collectives::CollectiveChoice choice;
    if (gpus > 1) {
      if (channels <= 0)
        channels = collectives::default_channels(spec);
      choice = collectives::choose_collective("auto", "topology", graph, 1e9, channels, spec.nvls_efficiency);
    }
    topologies::print_fabric_summary(std::cout, summary.get());
    if (gpus > 1) {
      std::cout << "  all-reduce of 1 GB, alpha-beta estimates (ring: " << channels << " channel"
                << (channels > 1 ? "s" : "") << "):\n";
      for (const auto& [name, t] : choice.estimates_s)
        std::printf("    %-18s %9.3f ms%s\n", name.c_str(), t * 1e3,
                    name == choice.schedule.algorithm ? "   <- auto" : "");
    }
    if (!options.dot.empty()) {
      std::ofstream out(options.dot);
      topologies::write_dot(out, graph);
      if (!out)
        throw std::runtime_error(options.dot + ": cannot write");
      std::cout << "wrote " << options.dot << "\n";
    }
  } catch (const model::InputError& e) {
    std::cerr << "memwall: error: " << memwall::model::printable_message(e.what()) << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

} // namespace memwall::cli
