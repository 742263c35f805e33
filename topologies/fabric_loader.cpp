#include "fabric_loader.hpp"

#include "star_fabric.hpp"

#include <sstream>
#include <stdexcept>

namespace memwall::topologies {

using model::Dimension;

FabricSpec parse_fabric(const model::InputNode& node) {
  if (node.is_scalar())
    node.fail("fabric files are not supported yet; describe the fabric inline, e.g. "
              "{kind: star, bandwidth: 25GB/s, latency: 0us}");
  node.check_keys({"kind", "bandwidth", "latency", "pj_per_bit", "gpu_links"});
  FabricSpec spec;
  spec.file = node.file();
  spec.line = node.line();
  const model::InputNode kind = node.child("kind");
  spec.kind = kind.as_string();
  if (spec.kind != "star")
    kind.fail("unknown fabric kind '" + spec.kind + "' (known: star)");
  spec.link_bytes_per_s = node.child("bandwidth").as_positive_quantity(Dimension::Bandwidth);
  if (auto c = node.optional_child("latency"))
    spec.link_latency_s = c->as_non_negative_quantity(Dimension::Time);
  if (auto c = node.optional_child("pj_per_bit"))
    spec.pj_per_bit = c->as_non_negative_number();
  if (auto c = node.optional_child("gpu_links")) {
    for (const auto& item : c->elements()) {
      item.check_keys({"gpu", "bandwidth", "latency"});
      const long long rank = item.child("gpu").as_non_negative_integer();
      LinkOverride o;
      if (auto b = item.optional_child("bandwidth"))
        o.bytes_per_s = b->as_positive_quantity(Dimension::Bandwidth);
      if (auto l = item.optional_child("latency"))
        o.latency_s = l->as_non_negative_quantity(Dimension::Time);
      if (!spec.gpu_links.emplace(rank, o).second)
        item.child("gpu").fail("GPU " + std::to_string(rank) + " is listed twice");
    }
  }
  return spec;
}

std::string describe_fabric(const FabricSpec& spec) {
  std::ostringstream out;
  out.precision(17);
  out << "{kind: " << spec.kind << ", bandwidth: " << spec.link_bytes_per_s << ", latency: " << spec.link_latency_s
      << ", pj_per_bit: " << spec.pj_per_bit;
  if (!spec.gpu_links.empty()) {
    out << ", gpu_links: [";
    const char* sep = "";
    for (const auto& [rank, o] : spec.gpu_links) {
      out << sep << "{gpu: " << rank;
      if (o.bytes_per_s > 0)
        out << ", bandwidth: " << o.bytes_per_s;
      if (o.latency_s >= 0)
        out << ", latency: " << o.latency_s;
      out << "}";
      sep = ", ";
    }
    out << "]";
  }
  out << "}";
  return out.str();
}

FabricGraph build_fabric_graph(const FabricSpec& spec, long long gpus) {
  for (const auto& [rank, o] : spec.gpu_links)
    if (rank >= gpus)
      throw model::InputError(spec.file, spec.line, "cluster.fabric.gpu_links",
                              "GPU " + std::to_string(rank) + " does not exist (the cluster has " +
                                  std::to_string(gpus) + " GPUs)");
  FabricGraph graph = build_star_graph(spec, gpus);
  try {
    validate_fabric_graph(graph);
  } catch (const std::invalid_argument& e) {
    throw model::InputError(spec.file, spec.line, "cluster.fabric", e.what());
  }
  return graph;
}

} // namespace memwall::topologies
