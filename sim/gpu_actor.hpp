// One GPU of a data-parallel job: per micro-batch, forward GEMM and element-wise phases for layers
// 1..L, backward phases for L..1; after the last micro-batch, the gradient all-reduce and the
// optimizer. Every phase is a SimGrid activity, so the simulated clock is the only source of time.
// ZeRO-2 reduce-scatters the gradient and all-gathers the updated parameters after the optimizer;
// ZeRO-3 also all-gathers the parameters before each micro-batch's forward and backward. With
// bucketed overlap, gradient buckets go to the GPU's CommActor during the last backward.
#pragma once

#include "phase_plan.hpp"
#include "collective_runner.hpp"
#include "comm_actor.hpp"
#include "run_recorder.hpp"

namespace memwall::sim {

class GpuActor {
public:
  GpuActor(long long rank, const Scenario& scenario, const StepWork& work, const CollectiveRunner& allreduce,
           RunRecorder& recorder, BucketQueue* buckets)
      : rank_(rank), scenario_(scenario), work_(work), allreduce_(allreduce), recorder_(recorder), buckets_(buckets) {}

  void operator()() const;

private:
  void run_phase(const PhaseContext& where, const PhaseCost& phase) const;
  void backward(long long step, long long mb, bool last_microbatch) const;
  void synchronise_gradients(long long step) const;

  long long rank_;
  const Scenario& scenario_;
  const StepWork& work_;
  const CollectiveRunner& allreduce_;
  RunRecorder& recorder_;
  BucketQueue* buckets_; // null without overlap
};

} // namespace memwall::sim
