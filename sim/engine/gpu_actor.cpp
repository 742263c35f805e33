#include "sim/engine/gpu_actor.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <cstdlib>
#include <string>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;

namespace {
// MEMWALL_SEPARATE_PHASES=1: every phase its own SimGrid activity (the reference the merged run is
// checked against, tests/check_speed_identity.py).
bool separate_phases() {
  static const bool separate = [] {
    const char* v = std::getenv("MEMWALL_SEPARATE_PHASES");
    return v && *v && std::string(v) != "0";
  }();
  return separate;
}
} // namespace

void GpuActor::run_phase(const PhaseContext& where, const PhaseCost& phase) const {
  if (phase.roofline_flops <= 0)
    return;
  if (separate_phases()) {
    const double t_start = sg4::Engine::get_clock();
    sg4::this_actor::execute(phase.roofline_flops);
    recorder_.record_phase(rank_, where, phase, t_start, sg4::Engine::get_clock());
    return;
  }
  if (!queued_) {
    queued_ = true;
    queued_end_s_ = sg4::Engine::get_clock();
  }
  // Dated as SimGrid dates an execution's end (start + work / speed), one phase after the other;
  // recorded now, simulated by flush().
  const double t_start = queued_end_s_;
  queued_end_s_ = t_start + phase.roofline_flops / sg4::this_actor::get_host()->get_speed();
  recorder_.record_phase(rank_, where, phase, t_start, queued_end_s_);
}

void GpuActor::flush() const {
  if (!queued_)
    return;
  queued_ = false;
  sg4::this_actor::sleep_until(queued_end_s_);
}

void GpuActor::run_phase_part(const PhaseContext& where, const PhaseCost& phase, double from, double to) const {
  if (to <= from)
    return;
  PhaseCost part = phase;
  const double share = to - from;
  part.flops *= share;
  part.hbm_bytes *= share;
  part.roofline_flops *= share;
  run_phase(where, part);
}

// The LM head and loss run after the last layer (traced as layer L); their parameters travel with
// the embeddings' (layer 0's share).
void GpuActor::run_head_forward(long long step, long long mb) const {
  run_phase({step, mb, scenario_.shape.layers}, work_.head.fwd_gemm);
  run_phase({step, mb, scenario_.shape.layers}, work_.head.fwd_elementwise);
}

void GpuActor::run_head_backward(long long step, long long mb) const {
  run_phase({step, mb, scenario_.shape.layers}, work_.head.bwd_elementwise);
  run_phase({step, mb, scenario_.shape.layers}, work_.head.bwd_gemm);
}

void GpuActor::backward(long long step, long long mb, bool last_microbatch) const {
  const bool bucketed = stream_ && last_microbatch;
  double pending = 0; // gradient bytes not yet handed to the communication stream
  run_head_backward(step, mb);
  if (bucketed) // an untied LM head's gradient opens the first bucket
    pending = work_.head.gradient_bytes;
  for (long long layer = scenario_.shape.layers - 1; layer >= 0; --layer) {
    const LayerWork& work = work_.layer(layer);
    if (!bucketed) {
      run_phase({step, mb, layer}, work.bwd_gemm);
      run_phase({step, mb, layer}, work.bwd_elementwise);
      continue;
    }
    // DDP fills buckets tensor by tensor: a bucket that fills inside the layer is handed over when
    // its last tensor's gradient is complete, splitting the layer's backward GEMM there. Shares are
    // cumulative sums of whole d^2 counts over 12, so a layer's last share is exactly 1.
    constexpr double kLayerD2 = 12.0;
    const double carried = pending; // from earlier layers, not yet handed over
    double handed = 0;              // share of this layer's gradients already handed over
    double d2_ready = 0;
    for (size_t t = 0; t + 1 < model::kLayerTensorsInBackwardOrder.size(); ++t) {
      d2_ready += model::kLayerTensorsInBackwardOrder[t].d2;
      const double ready = d2_ready / kLayerD2;
      const double bucket = (handed > 0 ? 0.0 : carried) + work.gradient_bytes * (ready - handed);
      if (bucket >= scenario_.training.bucket_bytes) {
        run_phase_part({step, mb, layer}, work.bwd_gemm, handed, ready);
        push(CollectivePart::AllReduce, bucket / work_.gradient_bytes, step, layer, false);
        handed = ready;
      }
    }
    run_phase_part({step, mb, layer}, work.bwd_gemm, handed, 1.0);
    run_phase({step, mb, layer}, work.bwd_elementwise);
    pending = (handed > 0 ? 0.0 : carried) + work.gradient_bytes * (1.0 - handed);
    if (pending >= scenario_.training.bucket_bytes && layer > 0) { // layer 0's last tensor goes in the last bucket
      push(CollectivePart::AllReduce, pending / work_.gradient_bytes, step, layer, false);
      pending = 0;
    }
  }
  if (bucketed) // the rest, with the embeddings' gradients (ready last), in the last bucket
    gradients_done_ =
        push(CollectivePart::AllReduce, (pending + work_.embedding_gradient_bytes) / work_.gradient_bytes, step, 0);
}

GpuActor::Queued GpuActor::push(CollectivePart part, double fraction, long long step, long long sequence,
                                bool awaited) const {
  if (allreduce_.streams_timed()) {
    const double ready_s = queued_ ? queued_end_s_ : sg4::Engine::get_clock();
    return {nullptr, allreduce_.queue(rank_, step, part, fraction, sequence, ready_s, awaited)};
  }
  flush();
  return {stream_->push(part, fraction, step, sequence, awaited), -1};
}

void GpuActor::wait_for(const Queued& queued, long long step, trace::TracePhase kind) const {
  flush();
  const double t_start = sg4::Engine::get_clock();
  if (queued.ticket >= 0)
    allreduce_.wait_queued(rank_, queued.ticket);
  else
    queued.done->acquire();
  recorder_.record_exposed_wait(rank_, step, kind, t_start, sg4::Engine::get_clock());
}

double GpuActor::layer_fraction(long long layer) const {
  // FSDP units: a layer's parameters; layer 0's unit also holds the embeddings and the LM head.
  const double layer_bytes =
      work_.layer(layer).gradient_bytes +
      (layer == 0 ? work_.embedding_gradient_bytes + work_.head.gradient_bytes : 0.0);
  return layer_bytes / work_.gradient_bytes;
}

void GpuActor::fsdp_microbatch(long long step, long long mb) const {
  const long long layers = scenario_.shape.layers;
  auto sequence = [&](long long kind, long long layer) { return (mb * 3 + kind) * layers + layer; };
  auto gather = [&](long long kind, long long layer) {
    return push(CollectivePart::AllGather, layer_fraction(layer), step, sequence(kind, layer));
  };
  // Forward: gather layer l + 1's parameters while layer l computes.
  // The last forward layer prefetches the first backward layer.
  Queued next = gather(0, 0);
  for (long long layer = 0; layer < layers; ++layer) {
    const Queued ready = next;
    next = layer + 1 < layers ? gather(0, layer + 1) : gather(1, layers - 1);
    wait_for(ready, step, trace::TracePhase::AllGather);
    run_phase({step, mb, layer}, work_.layer(layer).fwd_gemm);
    run_phase({step, mb, layer}, work_.layer(layer).fwd_elementwise);
  }
  run_head_forward(step, mb);
  run_head_backward(step, mb);
  // Backward: gather layer l - 1 again while layer l computes; reduce-scatter layer l's gradients
  // as soon as they exist. The optimizer waits for the last reduce-scatter.
  for (long long layer = layers - 1; layer >= 0; --layer) {
    const Queued ready = next;
    if (layer > 0)
      next = gather(1, layer - 1);
    wait_for(ready, step, trace::TracePhase::AllGather);
    run_phase({step, mb, layer}, work_.layer(layer).bwd_gemm);
    run_phase({step, mb, layer}, work_.layer(layer).bwd_elementwise);
    gradients_done_ = push(CollectivePart::ReduceScatter, layer_fraction(layer), step, sequence(2, layer),
                           layer == 0); // the last one is waited for
  }
}

void GpuActor::synchronise_gradients(long long step) const {
  flush();
  using model::Sharding;
  const Sharding sharding = scenario_.training.sharding;
  if (stream_) // the stream runs in order: the last one done means all are
    wait_for(gradients_done_, step,
             sharding == Sharding::Zero3 ? trace::TracePhase::ReduceScatter : trace::TracePhase::AllReduce);
  else if (sharding == Sharding::Zero2 || sharding == Sharding::Zero3)
    allreduce_.run(rank_, step, CollectivePart::ReduceScatter, 1.0, -1);
  else
    allreduce_.run(rank_, step);
  run_phase({step, -1, -1}, work_.optimizer);
  flush();
  if (sharding == Sharding::Zero2) // updated parameter shards back to every GPU
    allreduce_.run(rank_, step, CollectivePart::AllGather, 1.0, -2);
}

void GpuActor::operator()() const {
  const bool zero3 = scenario_.training.sharding == model::Sharding::Zero3;
  for (long long step = 0; step < scenario_.steps; ++step) {
    for (long long mb = 0; mb < scenario_.microbatches; ++mb) {
      if (zero3 && stream_) {
        fsdp_microbatch(step, mb);
        continue;
      }
      if (zero3) { // gather the parameters for the forward
        flush();
        allreduce_.run(rank_, step, CollectivePart::AllGather, 1.0, 2 * mb);
      }
      for (long long layer = 0; layer < scenario_.shape.layers; ++layer) {
        run_phase({step, mb, layer}, work_.layer(layer).fwd_gemm);
        run_phase({step, mb, layer}, work_.layer(layer).fwd_elementwise);
      }
      run_head_forward(step, mb);
      if (zero3) { // and again for the backward (they were freed after the forward)
        flush();
        allreduce_.run(rank_, step, CollectivePart::AllGather, 1.0, 2 * mb + 1);
      }
      backward(step, mb, mb == scenario_.microbatches - 1);
    }
    synchronise_gradients(step);
  }
  flush();
  recorder_.record_finish(rank_, sg4::Engine::get_clock());
}

} // namespace memwall::sim
