// Scale benchmark: simulates the worked example's 64-GPU IB row at another size and prints wall
// time, peak memory and simulated activities per second. One simulation per process (SimGrid).
//
// Usage: bench_scale SCENARIO.yaml GPUS MICROBATCHES   (0 0: the scenario's own, e.g. a model-parallel
// layout, whose GPU count and batch fix each other)
#include "model/gpu_catalog.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/engine/simulation.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s SCENARIO.yaml GPUS MICROBATCHES\n", argv[0]);
    return 2;
  }
  try {
    memwall::sim::Scenario s = memwall::sim::load_scenario(argv[1], memwall::model::GpuCatalog::builtin());
    if (std::atoll(argv[2]) > 0) {
      s.gpus = std::atoll(argv[2]);
      s.layout.data = s.gpus;
    }
    if (std::atoll(argv[3]) > 0)
      s.microbatches = std::atoll(argv[3]);
    const memwall::sim::RunResult r = memwall::sim::run_simulation(s);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("gpus=%lld microbatches=%lld layers=%lld  wall=%.2f s  peak_rss=%.0f MiB  activities=%lld  "
                "activities/s=%.0f  simulated step=%.4f s\n",
                s.gpus, s.microbatches, s.shape.layers, r.sim_wall_s, usage.ru_maxrss / 1024.0, r.activities,
                double(r.activities) / r.sim_wall_s, r.metrics.step_time_s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_scale: %s\n", e.what());
    return 1;
  }
  return 0;
}
