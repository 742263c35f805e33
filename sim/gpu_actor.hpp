// One GPU of a data-parallel job: per micro-batch, forward GEMM and element-wise phases for layers
// 1..L, backward phases for L..1; after the last micro-batch, the gradient all-reduce and the
// optimizer. Every phase is a SimGrid activity, so the simulated clock is the only source of time.
#pragma once

#include "phase_plan.hpp"
#include "collective_runner.hpp"
#include "run_recorder.hpp"

namespace memwall::sim {

class GpuActor {
public:
  GpuActor(long long rank, const Scenario& scenario, const StepWork& work, const CollectiveRunner& allreduce,
           RunRecorder& recorder)
      : rank_(rank), scenario_(scenario), work_(work), allreduce_(allreduce), recorder_(recorder) {}

  void operator()() const;

private:
  void run_phase(const PhaseContext& where, const PhaseCost& phase) const;

  long long rank_;
  const Scenario& scenario_;
  const StepWork& work_;
  const CollectiveRunner& allreduce_;
  RunRecorder& recorder_;
};

} // namespace memwall::sim
