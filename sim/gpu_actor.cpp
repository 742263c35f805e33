#include "gpu_actor.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

void GpuActor::run_phase(const PhaseContext& where, const PhaseCost& phase) const {
  if (phase.roofline_flops <= 0)
    return;
  const double t_start = sg4::Engine::get_clock();
  sg4::this_actor::execute(phase.roofline_flops);
  recorder_.record_phase(rank_, where, phase, t_start, sg4::Engine::get_clock());
}

void GpuActor::operator()() const {
  const long long layers = scenario_.shape.layers;
  for (long long step = 0; step < scenario_.steps; ++step) {
    for (long long mb = 0; mb < scenario_.microbatches; ++mb) {
      for (long long layer = 0; layer < layers; ++layer) {
        run_phase({step, mb, layer}, work_.fwd_gemm);
        run_phase({step, mb, layer}, work_.fwd_elementwise);
      }
      for (long long layer = layers - 1; layer >= 0; --layer) {
        run_phase({step, mb, layer}, work_.bwd_gemm);
        run_phase({step, mb, layer}, work_.bwd_elementwise);
      }
    }
    allreduce_.run(rank_, step);
    run_phase({step, -1, -1}, work_.optimizer);
  }
  recorder_.record_finish(rank_, sg4::Engine::get_clock());
}

} // namespace memwall::sim
