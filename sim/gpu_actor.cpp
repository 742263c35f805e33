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

void GpuActor::backward(long long step, long long mb, bool last_microbatch) const {
  const bool bucketed = buckets_ && last_microbatch;
  double pending = 0; // gradient bytes not yet handed to the communication stream
  for (long long layer = scenario_.shape.layers - 1; layer >= 0; --layer) {
    run_phase({step, mb, layer}, work_.bwd_gemm);
    run_phase({step, mb, layer}, work_.bwd_elementwise);
    if (!bucketed)
      continue;
    pending += work_.layer_gradient_bytes;
    if (pending >= scenario_.training.bucket_bytes && layer > 0) { // the first layer's goes in the last bucket
      buckets_->push(pending / work_.gradient_bytes);
      pending = 0;
    }
  }
  if (bucketed) { // the rest, with the embeddings' gradients (ready last), in the last bucket
    buckets_->push((pending + work_.embedding_gradient_bytes) / work_.gradient_bytes);
    buckets_->push(-1.0);
  }
}

void GpuActor::synchronise_gradients(long long step) const {
  using model::Sharding;
  const Sharding sharding = scenario_.training.sharding;
  if (buckets_)
    buckets_->step_done->acquire(); // the buckets' all-reduces are done
  else if (sharding == Sharding::Zero2 || sharding == Sharding::Zero3)
    allreduce_.run(rank_, step, CollectivePart::ReduceScatter, 1.0, -1);
  else
    allreduce_.run(rank_, step);
  run_phase({step, -1, -1}, work_.optimizer);
  if (sharding == Sharding::Zero2) // updated parameter shards back to every GPU
    allreduce_.run(rank_, step, CollectivePart::AllGather, 1.0, -2);
}

void GpuActor::operator()() const {
  const bool zero3 = scenario_.training.sharding == model::Sharding::Zero3;
  for (long long step = 0; step < scenario_.steps; ++step) {
    for (long long mb = 0; mb < scenario_.microbatches; ++mb) {
      if (zero3) // gather the parameters for the forward
        allreduce_.run(rank_, step, CollectivePart::AllGather, 1.0, 2 * mb);
      for (long long layer = 0; layer < scenario_.shape.layers; ++layer) {
        run_phase({step, mb, layer}, work_.fwd_gemm);
        run_phase({step, mb, layer}, work_.fwd_elementwise);
      }
      if (zero3) // and again for the backward (they were freed after the forward)
        allreduce_.run(rank_, step, CollectivePart::AllGather, 1.0, 2 * mb + 1);
      backward(step, mb, mb == scenario_.microbatches - 1);
    }
    synchronise_gradients(step);
  }
  recorder_.record_finish(rank_, sg4::Engine::get_clock());
}

} // namespace memwall::sim
