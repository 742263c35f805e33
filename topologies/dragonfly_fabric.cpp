#include "dragonfly_fabric.hpp"

#include <stdexcept>
#include <string>

namespace memwall::topologies {

namespace {

// Built by appending: GCC 12 warns (-Wrestrict, falsely) on "literal" + std::string at -O2.
std::string group_name(long long g) {
  return std::string("g").append(std::to_string(g));
}
std::string router_name(long long g, long long r) {
  return group_name(g).append("-r").append(std::to_string(r));
}

} // namespace

FabricGraph build_dragonfly_graph(const FabricSpec& spec, long long gpus) {
  const DragonflyParams& d = spec.dragonfly;
  const long long routers = d.groups * d.routers_per_group;
  if (routers * d.gpus_per_router != gpus)
    throw std::invalid_argument("the dragonfly holds " + std::to_string(routers * d.gpus_per_router) +
                                " GPUs (groups x routers_per_group x gpus_per_router), the cluster has " +
                                std::to_string(gpus));
  if (d.groups > 1 && d.routers_per_group * d.global_links_per_router < d.groups - 1)
    throw std::invalid_argument("routers_per_group x global_links_per_router must reach the other " +
                                std::to_string(d.groups - 1) + " groups");
  FabricGraph graph;
  std::vector<FabricVertex> router(static_cast<size_t>(routers));
  for (long long r = 0; r < routers; ++r)
    router[size_t(r)] = boost::add_vertex(
        FabricNode{router_name(r / d.routers_per_group, r % d.routers_per_group), NodeKind::Switch}, graph);
  auto link = [&](FabricVertex a, FabricVertex b, const std::string& name, const LinkFigures& f,
                  const char* cls) {
    boost::add_edge(a, b, FabricLink{name, f.bytes_per_s * f.efficiency, f.latency_s, f.pj_per_bit, cls}, graph);
  };
  for (long long rank = 0; rank < gpus; ++rank) {
    const long long r = rank / d.gpus_per_router;
    const std::string name = gpu_host_name(rank);
    const FabricVertex gpu =
        boost::add_vertex(FabricNode{name, NodeKind::Gpu, rank, r, rank % d.gpus_per_router}, graph);
    link(gpu, router[size_t(r)], name + "-link", d.gpu_link, "nic");
  }
  for (long long g = 0; g < d.groups; ++g)
    for (long long i = 0; i < d.routers_per_group; ++i)
      for (long long j = i + 1; j < d.routers_per_group; ++j)
        link(router[size_t(g * d.routers_per_group + i)], router[size_t(g * d.routers_per_group + j)],
             router_name(g, i) + "--r" + std::to_string(j), d.local_link, "switch");
  // Group g reaches group t through its router ((t - g - 1) mod groups) / h: global ports spread
  // over the group's routers in order.
  for (long long g = 0; g < d.groups; ++g)
    for (long long t = g + 1; t < d.groups; ++t) {
      const long long rg = ((t - g - 1) % d.groups + d.groups) % d.groups / d.global_links_per_router;
      const long long rt = ((g - t - 1) % d.groups + d.groups) % d.groups / d.global_links_per_router;
      link(router[size_t(g * d.routers_per_group + rg)], router[size_t(t * d.routers_per_group + rt)],
           group_name(g) + "--g" + std::to_string(t), d.global_link, "switch");
    }
  return graph;
}

} // namespace memwall::topologies
