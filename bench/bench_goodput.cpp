// The run simulation of issue 31 alone (the step is simulated once; the run is events): a scenario's
// reliability: and checkpoint: blocks over all its seeds at a given step time, timed.
//   bench_goodput scenarios/goodput/llama3-405b-16k.yaml 6.877     [target: seconds for 1,000 seeds]
#include "model/gpu_catalog.hpp"
#include "sim/scenario/reliability_keys.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_goodput SCENARIO STEP_S\n");
    return 2;
  }
  const memwall::sim::Scenario s = memwall::sim::load_scenario(argv[1], memwall::model::GpuCatalog::builtin());
  memwall::sim::GoodputInputs in;
  in.step_s = std::atof(argv[2]);
  const auto start = std::chrono::steady_clock::now();
  const memwall::model::GoodputReport g = memwall::sim::scenario_goodput(s, in);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %lld seeds of %.1f days at %.4g s a step: wall=%.3f s; %.1f interruptions (sem %.2f), goodput %.2f%%, "
              "checkpoint every %.0f steps\n",
              s.name.c_str(), s.reliability.seeds, g.days_mean, in.step_s, wall_s, g.interruptions_mean,
              g.interruptions_sem, 100 * g.goodput_mean, g.interval_steps);
  return 0;
}
