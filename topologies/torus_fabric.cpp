#include "torus_fabric.hpp"

#include <stdexcept>

namespace memwall::topologies {

FabricGraph build_torus_graph(const FabricSpec& spec, long long gpus) {
  const auto& dims = spec.torus.dims;
  long long product = 1;
  for (long long d : dims)
    product *= d;
  if (product != gpus)
    throw std::invalid_argument("the torus dimensions hold " + std::to_string(product) + " GPUs, the cluster has " +
                                std::to_string(gpus));
  FabricGraph graph;
  std::vector<FabricVertex> v(static_cast<size_t>(gpus));
  for (long long r = 0; r < gpus; ++r)
    v[size_t(r)] = boost::add_vertex(FabricNode{gpu_host_name(r), NodeKind::Gpu, r, r, 0}, graph);
  // Rank r has coordinates in row-major order; link each GPU to its + neighbour in every dimension.
  long long stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    const long long size = dims[k];
    for (long long r = 0; r < gpus; ++r) {
      const long long coord = (r / stride) % size;
      if (size < 2 || (size == 2 && coord == 1))
        continue; // a ring of two has one link, of one none
      const long long next = r + ((coord + 1) % size - coord) * stride;
      const LinkFigures& f = spec.torus.link;
      boost::add_edge(v[size_t(r)], v[size_t(next)],
                      FabricLink{gpu_host_name(r) + "-d" + std::to_string(k), f.bytes_per_s, f.latency_s, f.pj_per_bit,
                                 "torus"},
                      graph);
    }
    stride *= size;
  }
  return graph;
}

} // namespace memwall::topologies
