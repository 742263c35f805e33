#include "schedule.hpp"

#include <algorithm>

namespace memwall::pipeline {

namespace {

// Megatron-LM's interleaved order: the k-th forward (or backward) of a stage takes micro-batches in
// groups of p through the chunks, chunk 0 first forward and last first backward.
PipelineOp interleaved_op(bool forward, long long k, long long stages, long long chunks) {
  const long long group = k / (stages * chunks);
  const long long chunk_in_order = (k / stages) % chunks;
  return {forward, group * stages + k % stages, forward ? chunk_in_order : chunks - 1 - chunk_in_order};
}

} // namespace

std::vector<PipelineOp> stage_order(ScheduleKind kind, long long stages, long long stage, long long microbatches,
                                    long long chunks) {
  std::vector<PipelineOp> order;
  order.reserve(static_cast<size_t>(2 * microbatches * chunks));
  if (kind == ScheduleKind::GPipe) {
    for (long long c = 0; c < chunks; ++c)
      for (long long mb = 0; mb < microbatches; ++mb)
        order.push_back({true, mb, c});
    for (long long c = chunks; c-- > 0;)
      for (long long mb = 0; mb < microbatches; ++mb)
        order.push_back({false, mb, c});
    return order;
  }
  const long long total = microbatches * chunks;
  // Warm-up forwards: enough to fill the pipeline behind this stage (twice its depth from the end
  // when interleaved, plus a full round of the other chunks).
  long long warmup = chunks == 1 ? stages - stage - 1 : (stages - stage - 1) * 2 + (chunks - 1) * stages;
  if (chunks > 1 && microbatches == stages)
    warmup = total; // Megatron-LM: with m = p every forward runs first
  warmup = std::clamp(warmup, 0LL, total);
  auto op = [&](bool forward, long long k) {
    return chunks == 1 ? PipelineOp{forward, k, 0} : interleaved_op(forward, k, stages, chunks);
  };
  for (long long k = 0; k < warmup; ++k)
    order.push_back(op(true, k));
  for (long long k = 0; k < total - warmup; ++k) {
    order.push_back(op(true, warmup + k));
    order.push_back(op(false, k));
  }
  for (long long k = total - warmup; k < total; ++k)
    order.push_back(op(false, k));
  return order;
}

long long peak_in_flight(const std::vector<PipelineOp>& order) {
  long long now = 0, peak = 0;
  for (const PipelineOp& op : order) {
    now += op.forward ? 1 : -1;
    peak = std::max(peak, now);
  }
  return peak;
}

const char* schedule_name(ScheduleKind kind) { return kind == ScheduleKind::GPipe ? "gpipe" : "1f1b"; }

} // namespace memwall::pipeline
