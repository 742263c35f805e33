// One GPU of a data-parallel job: per micro-batch, forward GEMM and element-wise phases for layers
// 1..L, backward phases for L..1; after the last micro-batch, the gradient all-reduce and the
// optimizer. Every phase is a SimGrid activity, so the simulated clock is the only source of time.
// ZeRO-2 reduce-scatters the gradient and all-gathers the updated parameters after the optimizer;
// ZeRO-3 also all-gathers the parameters before each micro-batch's forward and backward. With
// overlap, communication goes to the GPU's communication stream (a CommActor, or, where every round
// of the collective is private, CollectiveRunner's timed stream): gradient buckets during the last
// backward (DDP), or, for ZeRO-3, each layer's parameter all-gather one layer ahead and its gradient
// reduce-scatter right after its backward (FSDP with prefetch).
//
// Speed: phases that follow each other with nothing in between (no collective, no hand-over to the
// communication stream, no wait) run as one SimGrid activity. Nothing else runs on a GPU's host, so
// each phase would take its work over the host's speed; their times are recorded as SimGrid would
// have advanced its clock phase by phase (start + work / speed, one after the other), so a merged
// run of a GPU's phases records the same times as separate activities would.
#pragma once

#include "sim/engine/phase_plan.hpp"
#include "sim/engine/collective_runner.hpp"
#include "sim/engine/comm_actor.hpp"
#include "sim/engine/run_recorder.hpp"

namespace memwall::sim {

class GpuActor {
public:
  GpuActor(long long rank, const Scenario& scenario, const StepWork& work, const CollectiveRunner& allreduce,
           RunRecorder& recorder, CommQueue* stream)
      : rank_(rank), scenario_(scenario), work_(work), allreduce_(allreduce), recorder_(recorder), stream_(stream) {}

  void operator()() const;

private:
  // Records a phase after those queued; flush() simulates them as one activity. Everything that
  // meets another actor (a collective, a push to a CommActor's stream, a wait) flushes first; a push
  // to a timed stream passes the time its data is ready instead.
  void run_phase(const PhaseContext& where, const PhaseCost& phase) const;
  void flush() const;
  void run_head_forward(long long step, long long mb) const;
  void run_head_backward(long long step, long long mb) const;
  // The share [from, to) of a phase's work (a layer's backward GEMM split at a bucket boundary).
  void run_phase_part(const PhaseContext& where, const PhaseCost& phase, double from, double to) const;
  void backward(long long step, long long mb, bool last_microbatch) const;
  void synchronise_gradients(long long step) const;
  void fsdp_microbatch(long long step, long long mb) const;
  // A collective handed to the communication stream: the semaphore its end releases (a CommActor's
  // stream), or its number in a timed stream (CollectiveRunner::queue).
  struct Queued {
    simgrid::s4u::SemaphorePtr done;
    long long ticket = -1;
  };
  // Hands a collective to the stream, its data ready when the phases recorded so far end (a
  // CommActor's stream needs this actor's clock there: it flushes first).
  Queued push(CollectivePart part, double fraction, long long step, long long sequence, bool awaited = true) const;
  // Waits for a collective on the communication stream; the wait is exposed communication of `kind`.
  void wait_for(const Queued& queued, long long step, trace::TracePhase kind) const;
  double layer_fraction(long long layer) const; // of all parameters; layer 0 carries the embeddings

  long long rank_;
  const Scenario& scenario_;
  const StepWork& work_;
  const CollectiveRunner& allreduce_;
  RunRecorder& recorder_;
  CommQueue* stream_; // null without overlap
  mutable Queued gradients_done_; // the step's last queued gradient collective
  mutable bool queued_ = false;    // phases recorded but not yet simulated
  mutable double queued_end_s_ = 0; // when the last of them ends
};

} // namespace memwall::sim
