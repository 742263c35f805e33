// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes of
// its micro-batches. Pure data, no SimGrid: the engine runs these orders, and the bubble emerges
// from the dependencies between stages (a forward needs the previous stage's activations, a
// backward the next stage's gradients), never from a formula.
//
// - GPipe: every forward, then every backward (Huang et al. 2019).
// - 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s runs p - s - 1 warm-up forwards, then
//   alternates one forward and one backward, then drains the remaining backwards. Same bubble as
//   GPipe, (p - 1) / (m + p - 1) of the step, but at most p - s micro-batches in flight.
// - Interleaved 1F1B (Narayanan et al. 2021, Sec. 2.2): each stage holds v model chunks (virtual
//   stage c p + s); micro-batches go through the chunks in groups of p. Bubble (p - 1) / (v m + p - 1)
//   of the step; needs m to be a multiple of p, as Megatron-LM does.
#pragma once

#include <string>
#include <vector>

namespace memwall::pipeline {

enum class ScheduleKind { GPipe, OneFOneB };

struct PipelineOp {
  bool forward = true;
  long long microbatch = 0;
  long long chunk = 0; // model chunk on this stage (0 unless interleaved)
};

// The ops of stage `stage` of `stages`, with `microbatches` micro-batches and `chunks` model chunks
// per stage (virtual stages), in the order the stage runs them. Every (micro-batch, chunk) appears
// once forward and once backward, the backward after its forward.
std::vector<PipelineOp> stage_order(ScheduleKind kind, long long stages, long long stage, long long microbatches,
                                    long long chunks);

// Micro-batches a stage holds activations for at most, over its order (the memory a schedule needs):
// forwards run whose backward has not.
long long peak_in_flight(const std::vector<PipelineOp>& order);

const char* schedule_name(ScheduleKind kind);

} // namespace memwall::pipeline
