// Pipeline schedules and the layout's rank mapping, checked against their definitions (Narayanan et
// al. 2021, Sec. 2.2; Megatron-LM's placement of stages and uneven layer splits).
#include "model/parallel_layout.hpp"
#include "pipeline/schedule.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <numeric>
#include <set>

using namespace memwall;
using pipeline::PipelineOp;
using pipeline::ScheduleKind;

namespace {

// Every (micro-batch, chunk) once forward and once backward, the backward after the forward.
void check_complete(const std::vector<PipelineOp>& order, long long m, long long v) {
  std::map<std::pair<long long, long long>, int> seen; // 1: forward done, 2: backward done
  for (const PipelineOp& op : order) {
    int& state = seen[{op.microbatch, op.chunk}];
    if (op.forward) {
      CHECK(state == 0);
      state = 1;
    } else {
      CHECK(state == 1);
      state = 2;
    }
  }
  CHECK(seen.size() == size_t(m * v));
  for (const auto& [key, state] : seen)
    CHECK(state == 2);
}

} // namespace

TEST_CASE("1F1B: p - s - 1 warm-up forwards, then one forward one backward; at most p - s in flight") {
  const long long p = 4, m = 8;
  for (long long s = 0; s < p; ++s) {
    const auto order = pipeline::stage_order(ScheduleKind::OneFOneB, p, s, m, 1);
    check_complete(order, m, 1);
    for (long long k = 0; k < p - s - 1; ++k)
      CHECK(order[size_t(k)].forward);
    CHECK_FALSE(order[size_t(p - s)].forward); // the first backward right after the first steady forward
    CHECK(pipeline::peak_in_flight(order) == p - s);
  }
  // Fewer micro-batches than stages: all forwards first.
  CHECK(pipeline::peak_in_flight(pipeline::stage_order(ScheduleKind::OneFOneB, 8, 0, 3, 1)) == 3);
}

TEST_CASE("GPipe holds every micro-batch's activations; 1F1B only the pipeline's depth") {
  const long long p = 4, m = 16;
  const auto gpipe = pipeline::stage_order(ScheduleKind::GPipe, p, 0, m, 1);
  check_complete(gpipe, m, 1);
  CHECK(pipeline::peak_in_flight(gpipe) == m);
  CHECK(pipeline::peak_in_flight(pipeline::stage_order(ScheduleKind::OneFOneB, p, 0, m, 1)) == p);
}

TEST_CASE("interleaved 1F1B: micro-batches in groups of p through the chunks (Megatron-LM's order)") {
  const long long p = 4, m = 8, v = 2;
  for (long long s = 0; s < p; ++s) {
    const auto order = pipeline::stage_order(ScheduleKind::OneFOneB, p, s, m, v);
    check_complete(order, m, v);
    // Warm-up: 2 (p - s - 1) + (v - 1) p forwards.
    const long long warmup = 2 * (p - s - 1) + (v - 1) * p;
    for (long long k = 0; k < warmup; ++k)
      CHECK(order[size_t(k)].forward);
    CHECK(order[size_t(warmup)].forward);
    CHECK_FALSE(order[size_t(warmup + 1)].forward);
  }
  // Forwards 0..p-1 are micro-batches 0..p-1 of chunk 0, then the same micro-batches on chunk 1.
  const auto order = pipeline::stage_order(ScheduleKind::OneFOneB, p, 0, m, v);
  for (long long k = 0; k < 2 * p; ++k) {
    CHECK(order[size_t(k)].microbatch == k % p);
    CHECK(order[size_t(k)].chunk == k / p);
  }
}

TEST_CASE("layers per stage: even, or one fewer on the first and last stages (Llama-3.1 405B: 126 over 16)") {
  auto split = model::default_stage_layers(126, 16);
  CHECK(split.front() == 7);
  CHECK(split.back() == 7);
  CHECK(std::accumulate(split.begin(), split.end(), 0LL) == 126);
  for (size_t s = 1; s + 1 < split.size(); ++s)
    CHECK(split[s] == 8);
  split = model::default_stage_layers(96, 8);
  CHECK(std::set<long long>(split.begin(), split.end()) == std::set<long long>{12});
  split = model::default_stage_layers(10, 4); // 3 3 3 3 less 2: 2 3 3 2
  CHECK(split == std::vector<long long>{2, 3, 3, 2});
}

TEST_CASE("ranks: placement innermost first; chunks of interleaved stages are every p-th piece") {
  model::ParallelLayout l;
  l.tensor = 8;
  l.pipeline = 4;
  l.data = 2;
  // Default [tensor, context, expert, data, pipeline]: a TP group is 8 consecutive ranks.
  CHECK(model::rank_of(l, {3, 0, 0, 0}) == 3);
  CHECK(model::rank_of(l, {0, 0, 1, 0}) == 8);
  CHECK(model::rank_of(l, {0, 0, 0, 1}) == 16);
  for (long long r = 0; r < 64; ++r)
    CHECK(model::rank_of(l, model::coords_of(l, r)) == r);
  l.placement = {model::Axis::Tensor, model::Axis::Pipeline, model::Axis::Context, model::Axis::Expert,
                 model::Axis::Data};
  CHECK(model::rank_of(l, {0, 0, 0, 1}) == 8);
  CHECK(model::rank_of(l, {0, 0, 1, 0}) == 32);
  l.stage_layers = {4, 4, 4, 4};
  l.virtual_stages = 2;
  // 16 layers in 8 pieces of 2: stage 1 holds pieces 1 and 5.
  CHECK(model::chunk_layers(l, 1, 0).first == 2);
  CHECK(model::chunk_layers(l, 1, 1).first == 10);
  CHECK(model::chunk_layers(l, 1, 1).last == 12);
}
