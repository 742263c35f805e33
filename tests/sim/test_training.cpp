// Training plans beyond the seed: bucketed overlap, ZeRO stages, activation recompute. Each
// expectation is derived here from the algorithm (D = bf16 gradient bytes = 2P, ring on a star of
// N GPUs: 2 (N-1)/N x bytes / B per all-reduce, (N-1)/N x bytes / B per reduce-scatter or all-gather).
#include "model/layer_cost.hpp"
#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include "sim/engine/isolated_run.hpp"
#include "sim/engine/link_events.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/scenario_text.hpp"
#include "test_support.hpp"

using namespace memwall;
using memwall::test::gpu;
using memwall::test::rel;

namespace {

constexpr long long kN = 4, kLayers = 4, kHidden = 1024, kVocab = 8192;
constexpr double kB = 100e9;

sim::Scenario plan(model::Sharding sharding, long long microbatches = 1) {
  sim::Scenario s;
  s.name = "training";
  s.file = "test";
  s.gpu = gpu("A100-80GB");
  s.shape = {kHidden, kLayers, 1024, kVocab};
  s.tokens_per_microbatch = 4096;
  s.microbatches = microbatches;
  s.gpus = kN;
  s.fabric.link_bytes_per_s = kB;
  s.training.sharding = sharding;
  return s;
}

double params(const sim::Scenario& s) { return model::total_params(s.shape); }
double ring_allreduce_s(double bytes) { return 2.0 * (kN - 1) / kN * bytes / kB; }
double t_layer(const sim::Scenario& s) {
  return model::layer_step(kHidden, s.tokens_per_microbatch, s.gpu, {}, s.shape.seq_len).t_s;
}
double t_optimizer(const sim::Scenario& s, double updaters) { return 30.0 * params(s) / updaters / 2.039e12; }

} // namespace

TEST_CASE("bucketed overlap hides all but the last bucket under the backward pass") {
  sim::Scenario s = plan(model::Sharding::Zero1);
  s.training.overlap_bucketed = true;
  const double layer_grad = 2.0 * 12.0 * kHidden * kHidden, embedding_grad = 2.0 * 2.0 * kVocab * kHidden;
  s.training.bucket_bytes = layer_grad; // one bucket per layer; layer 1's and the embeddings' last
  // Precondition of the derivation: a bucket's all-reduce fits under one layer's backward.
  REQUIRE(ring_allreduce_s(layer_grad) < t_layer(s) * 2.0 / 3.0);
  const auto r = sim::run_isolated(s);
  const double exposed = ring_allreduce_s(layer_grad + embedding_grad);
  const double expected = kLayers * t_layer(s) + exposed + t_optimizer(s, kN);
  CHECK(r["step_time_s"].get<double>() == rel(expected, 0.01));
  CHECK(r["t_allreduce_s"].get<double>() == rel(exposed, 0.01));
  // All buckets together move the whole gradient: the total is one full all-reduce.
  CHECK(r["t_comm_total_s"].get<double>() == rel(ring_allreduce_s(2.0 * params(s)), 0.01));
  CHECK(r["t_allreduce_s"].get<double>() <= r["t_comm_total_s"].get<double>());
  // Without overlap the whole all-reduce is exposed.
  s.training.overlap_bucketed = false;
  const auto plain = sim::run_isolated(s);
  CHECK(plain["t_allreduce_s"].get<double>() == rel(ring_allreduce_s(2.0 * params(s)), 0.01));
  CHECK(plain["t_comm_total_s"].get<double>() == plain["t_allreduce_s"].get<double>());
}

TEST_CASE("bucketed overlap fills buckets tensor by tensor, not layer by layer") {
  // Buckets of 0.6 layer: gradients arrive per layer as fc2 (4/12), fc1 (4/12), proj (1/12), qkv (3/12).
  // Layer 3: fc2 + fc1 = 2/3 >= 0.6, handed over; proj + qkv = 1/3 carried. Layer 2: 1/3 + fc2 = 2/3,
  // handed over; fc1 + proj + qkv = 2/3 at the layer's end. Layer 1 as layer 3, layer 0: 1/3 + fc2 =
  // 2/3 handed over, and fc1 + proj + qkv (2/3) go with the embeddings in the last bucket. Layer by
  // layer, the last bucket would have been a whole layer plus the embeddings. DDP (no sharding): each
  // bucket all-reduced (zero1 reduce-scatters it and gathers the parameters beside the next forward).
  sim::Scenario s = plan(model::Sharding::None);
  s.training.overlap_bucketed = true;
  const double layer_grad = 2.0 * 12.0 * kHidden * kHidden, embedding_grad = 2.0 * 2.0 * kVocab * kHidden;
  s.training.bucket_bytes = 0.6 * layer_grad;
  // Precondition: a bucket's all-reduce fits under a third of a layer's backward.
  REQUIRE(ring_allreduce_s(2.0 / 3.0 * layer_grad) < t_layer(s) * 2.0 / 3.0 / 3.0);
  const auto r = sim::run_isolated(s);
  const double exposed = ring_allreduce_s(2.0 / 3.0 * layer_grad + embedding_grad);
  CHECK(r["t_allreduce_s"].get<double>() == rel(exposed, 0.01));
  CHECK(r["step_time_s"].get<double>() == rel(kLayers * t_layer(s) + exposed + t_optimizer(s, 1), 0.01));
  CHECK(r["t_comm_total_s"].get<double>() == rel(ring_allreduce_s(2.0 * params(s)), 0.01));
}

TEST_CASE("bucketed overlap: an untied LM head's gradient goes first, every byte exactly once") {
  // A small Llama-style model (d 1024, 4 layers, SwiGLU f 2816, V 32000, untied): the head's 2 V d
  // bf16 gradient bytes are complete first in the backward, so the last bucket holds at most the
  // embedding's V d (+ final norm) and one layer: exposed <= ring(that).
  const sim::Scenario s = test::scenario_from_text(
      "name: small\ngpu: A100-80GB\nmodel: {like: llama3-8b, hidden: 1024, layers: 4, heads: 8, kv_heads: 8, "
      "ffn_hidden: 2816, vocab: 32000, seq_len: 1024}\nbatch: {tokens_per_microbatch: 4096}\n"
      "cluster: {gpus: 4, fabric: {kind: star, bandwidth: 100GB/s}}\n"
      "training: {sharding: zero1, overlap: bucketed, bucket: 8MB}\n",
      "small.yaml");
  const double d = 1024, V = 32000, layer = 4 * d * d + 3 * d * 2816 + 2 * d;
  const double params = 4 * layer + 2 * V * d + d;
  const auto r = sim::run_isolated(s);
  CHECK(r["bytes_sent_per_gpu"].get<double>() == rel(2.0 * (kN - 1) / kN * 2.0 * params, 1e-9));
  CHECK(r["t_comm_total_s"].get<double>() == rel(ring_allreduce_s(2.0 * params), 0.01));
  CHECK(r["t_allreduce_s"].get<double>() <= ring_allreduce_s(2.0 * (V * d + d + layer)) * 1.01);
  CHECK(r["t_allreduce_s"].get<double>() < ring_allreduce_s(2.0 * 2 * V * d));
}

TEST_CASE("ZeRO stages: bytes each GPU sends per step") {
  const double d = 2.0 * params(plan(model::Sharding::Zero1));
  const double share = (kN - 1.0) / kN * d; // one reduce-scatter or one all-gather
  auto sent = [&](model::Sharding sh, long long mb) {
    return sim::run_isolated(plan(sh, mb))["bytes_sent_per_gpu"].get<double>();
  };
  CHECK(sent(model::Sharding::None, 1) == rel(2.0 * share, 1e-9));
  CHECK(sent(model::Sharding::Zero1, 1) == rel(2.0 * share, 1e-9));
  CHECK(sent(model::Sharding::Zero2, 1) == rel(2.0 * share, 1e-9)); // reduce-scatter + all-gather
  CHECK(sent(model::Sharding::Zero3, 1) == rel(3.0 * share, 1e-9)); // 1.5 x an all-reduce
  // ZeRO-3 gathers the parameters for every micro-batch's forward and backward.
  CHECK(sent(model::Sharding::Zero3, 3) == rel((2.0 * 3 + 1) * share, 1e-9));
}

TEST_CASE("ZeRO stages: optimizer work and memory footprint") {
  const sim::Scenario none = plan(model::Sharding::None), z2 = plan(model::Sharding::Zero2);
  const auto r_none = sim::run_isolated(none), r_z2 = sim::run_isolated(z2);
  CHECK(r_none["t_optimizer_s"].get<double>() == rel(t_optimizer(none, 1), 1e-6));
  CHECK(r_z2["t_optimizer_s"].get<double>() == rel(t_optimizer(z2, kN), 1e-6));
  const double p = params(none), act = 34.0 * kHidden * 4096 * kLayers;
  // Plus what a process holds besides tensors: the CUDA context (0.5 GB) and one NCCL communicator's
  // buffers (0.688 GB), the figures model/memory_footprint.hpp cites.
  const double reserved = 0.5e9 + 0.688e9;
  CHECK(r_none["footprint_bytes"].get<double>() == rel(16 * p + act + reserved));
  CHECK(r_z2["footprint_bytes"].get<double>() == rel(2 * p + 14 * p / kN + act + reserved));
  CHECK(r_z2["memory"]["reserved_bytes"].get<double>() == rel(reserved));
  // ZeRO-2's step: reduce-scatter, optimizer, all-gather: the same wire time as one all-reduce.
  CHECK(r_z2["t_allreduce_s"].get<double>() == rel(ring_allreduce_s(2.0 * p), 0.01));
}

TEST_CASE("activation recompute: the backward runs the forward again") {
  sim::Scenario s = plan(model::Sharding::Zero1);
  const double base = sim::run_isolated(s)["t_compute_s"].get<double>();
  s.training.activation_recompute = true;
  const auto r = sim::run_isolated(s);
  CHECK(base == rel(kLayers * t_layer(s), 1e-6));
  CHECK(r["t_compute_s"].get<double>() == rel(4.0 / 3.0 * base, 1e-6));
  CHECK(r["footprint_bytes"].get<double>() <
        sim::run_isolated(plan(model::Sharding::Zero1))["footprint_bytes"].get<double>());
}

TEST_CASE("full recompute of every second layer: half the layers pay 4/3, half keep their activations") {
  // torchtitan's "selective layer" checkpointing (ac_freq 2): layers 0 and 2 of 4 recompute.
  sim::Scenario s = plan(model::Sharding::Zero1);
  const auto none = sim::run_isolated(s);
  s.training.activation_recompute = true;
  s.training.recompute_every = 2;
  const auto r = sim::run_isolated(s);
  const double base = none["t_compute_s"].get<double>();
  CHECK(r["t_compute_s"].get<double>() == rel(base * (2 * 4.0 / 3.0 + 2) / 4.0, 1e-6));
  // Two layers keep only their bf16 input (2 d T) instead of 34 d T.
  CHECK(none["footprint_bytes"].get<double>() - r["footprint_bytes"].get<double>() ==
        rel(2 * (34.0 - 2.0) * kHidden * s.tokens_per_microbatch, 1e-9));
}

TEST_CASE("selective recompute adds exactly the attention core's forward FLOPs") {
  // Per layer and token the core's forward is 4 s d FLOPs (full score matrix, the seed's convention).
  sim::Scenario s = plan(model::Sharding::Zero1);
  const double none = sim::run_isolated(s)["flops"].get<double>();
  s.training.selective_recompute = true;
  const auto r = sim::run_isolated(s);
  const double core_forward = 4.0 * double(s.shape.seq_len) * kHidden * s.tokens_per_microbatch * kLayers;
  CHECK(r["flops"].get<double>() - none == rel(core_forward, 1e-9));
  CHECK(r["footprint_bytes"].get<double>() ==
        sim::run_isolated(plan(model::Sharding::Zero1))["footprint_bytes"].get<double>());
}

TEST_CASE("FP8: the weight GEMMs at the FP8 rate, attention and element-wise work as in BF16") {
  // H100-SXM: 989 TFLOP/s BF16, 1979 FP8 (data sheet). d = 4096, T = 4096: compute-bound GEMMs, so
  // FP8 saves the weight GEMMs' 72 d^2 T FLOPs per layer the difference of the two rates.
  sim::Scenario s = plan(model::Sharding::Zero1);
  s.gpu = gpu("H100-SXM");
  s.shape = {4096, 2, 2048, 1000};
  const double d = 4096, t = s.tokens_per_microbatch, layers = 2;
  REQUIRE(model::layer_step(4096, t, s.gpu, {}, 2048).t_gemm_s ==
          rel(model::layer_step(4096, t, s.gpu, {}, 2048).flops / 989e12, 1e-12));
  const auto bf16 = sim::run_isolated(s);
  s.training.fp8 = true;
  const auto fp8 = sim::run_isolated(s);
  const double saved = 72.0 * d * d * t * layers * (1.0 / 989e12 - 1.0 / 1979e12);
  CHECK(bf16["t_compute_s"].get<double>() - fp8["t_compute_s"].get<double>() == rel(saved, 1e-6));
  CHECK(fp8["flops"].get<double>() == bf16["flops"].get<double>());
  // Memory: an FP8 copy of every weight and of its transpose, 2 bytes per parameter more.
  CHECK(fp8["footprint_bytes"].get<double>() - bf16["footprint_bytes"].get<double>() ==
        rel(2.0 * params(s), 1e-12));
}

TEST_CASE("one GPU at half speed: a synchronous step waits for its compute and optimizer") {
  sim::Scenario s = plan(model::Sharding::Zero1);
  const auto base = sim::run_isolated(s);
  s.gpu_speed[2] = 0.5;
  const auto slow = sim::run_isolated(s);
  // The slow GPU takes twice as long to compute and to update; the ring cannot finish before it joins,
  // then proceeds at link speed: the step grows by one compute time plus one optimizer time.
  const double extra = kLayers * t_layer(s) + t_optimizer(s, kN);
  CHECK(slow["step_time_s"].get<double>() - base["step_time_s"].get<double>() == rel(extra, 0.01));
}

TEST_CASE("stragglers from a seeded distribution are deterministic") {
  sim::Scenario s = plan(model::Sharding::Zero1);
  s.speed_distribution = "normal";
  s.speed_mean = 1.0;
  s.speed_spread = 0.1;
  s.speed_seed = 42;
  const auto a = sim::run_isolated(s), b = sim::run_isolated(s);
  CHECK(a["step_time_s"].get<double>() == b["step_time_s"].get<double>()); // bit-identical
  CHECK(a["energy_j"].get<double>() == b["energy_j"].get<double>());
  const auto factors = sim::gpu_speed_factors(s);
  const double slowest = *std::min_element(factors.begin(), factors.end());
  // The step is paced by the slowest GPU's compute and optimizer.
  CHECK(a["step_time_s"].get<double>() ==
        rel((kLayers * t_layer(s) + t_optimizer(s, kN)) / slowest + ring_allreduce_s(2.0 * params(s)), 0.01));
  s.speed_seed = 43;
  CHECK(sim::gpu_speed_factors(s) != factors);
}

TEST_CASE("achieved efficiencies: GEMMs at half peak, links at 80%, per-message latency") {
  sim::Scenario s = plan(model::Sharding::Zero1);
  const model::LayerCost c = model::layer_step(kHidden, s.tokens_per_microbatch, s.gpu, {}, s.shape.seq_len);
  REQUIRE(c.flops / s.gpu.peak_flops_per_s > c.weight_bytes / s.gpu.hbm_bytes_per_s); // compute-bound
  const auto base = sim::run_isolated(s);
  s.gpu.gemm_efficiency = 0.5;
  s.fabric.efficiency = 0.8;
  s.fabric.message_latency_s = 10e-6;
  const auto r = sim::run_isolated(s);
  const double gemm = c.flops / s.gpu.peak_flops_per_s;
  CHECK(r["t_compute_s"].get<double>() - base["t_compute_s"].get<double>() == rel(kLayers * gemm, 1e-6));
  // Ring: 2 (N-1) steps, each paying the software latency.
  CHECK(r["t_allreduce_s"].get<double>() ==
        rel(ring_allreduce_s(2.0 * params(s)) / 0.8 + 2.0 * (kN - 1) * 10e-6, 0.01));
}

TEST_CASE("FSDP (ZeRO-3) with prefetch: only the first gather and the last reduce-scatter show") {
  sim::Scenario s = plan(model::Sharding::Zero3, 2);
  s.training.overlap_bucketed = true;
  const double layer_bytes = 2.0 * 12.0 * kHidden * kHidden, embedding_bytes = 2.0 * 2.0 * kVocab * kHidden;
  const double share = (kN - 1.0) / kN / kB; // seconds per byte of a ring all-gather / reduce-scatter
  REQUIRE(2.0 * layer_bytes * share < t_layer(s) / 3.0); // a layer's gather + scatter hide under compute
  // Each micro-batch waits for layer 0's gather (with the embeddings) and, from the second on, for
  // the previous micro-batch's last reduce-scatter, queued before it; the step ends with the last one.
  const double edge = (layer_bytes + embedding_bytes) * share;
  const double expected = 2.0 * (edge + kLayers * t_layer(s) + edge) + t_optimizer(s, kN);
  const auto r = sim::run_isolated(s);
  CHECK(r["step_time_s"].get<double>() == rel(expected, 0.01));
  // FSDP reduce-scatters every micro-batch: 3 collectives of the whole parameter set per micro-batch.
  CHECK(r["bytes_sent_per_gpu"].get<double>() == rel(3.0 * 2 * (kN - 1.0) / kN * 2.0 * params(s), 1e-9));
  CHECK(r["t_allreduce_s"].get<double>() <= r["t_comm_total_s"].get<double>());
}

TEST_CASE("a run with a GPU that never finished, or with bytes lost, gives no result") {
  // SimGrid ends a deadlocked run normally; the end-of-run check must turn it into a stall report.
  std::vector<sim::GpuTotals> totals(3);
  for (auto& t : totals) {
    t.finished = true;
    t.bytes_sent = t.bytes_received = 1e9;
  }
  sim::FaultLog faults;
  CHECK_NOTHROW(sim::check_run_complete(totals, faults));
  faults.applied = {"t = 0.15 s: gpu000003-nic down"};
  totals[1].finished = false;
  CHECK_THROWS_WITH(sim::check_run_complete(totals, faults),
                    Catch::Contains("stalled after t = 0.15 s: gpu000003-nic down: GPU 1 never finished"));
  totals[1].finished = true;
  totals[2].bytes_received = 0.5e9; // half of one GPU's share never arrived
  CHECK_THROWS_WITH(sim::check_run_complete(totals, faults), Catch::Contains("bytes were lost"));
}
