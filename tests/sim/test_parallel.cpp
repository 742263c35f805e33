// Tensor and pipeline parallelism, simulated, against hand-derived figures: the pipeline bubble of
// GPipe, 1F1B and interleaved 1F1B on a network that costs nothing (Narayanan et al. 2021), the TP
// collectives' alpha-beta time, a TP group split over two servers, the per-GPU share of the work.
#include "sim/engine/isolated_run.hpp"
#include "sim/scenario_text.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace memwall;
using memwall::test::rel;
using memwall::test::scenario_from_text;

namespace {

// A seed-shaped model (no LM head, no embeddings: every stage does the same work) on a star whose
// links cost nothing, so the only idle time is the schedule's.
std::string pipeline_yaml(long long stages, long long microbatches, const std::string& schedule,
                          long long virtual_stages) {
  return "gpu: A100-80GB\n"
         "model: {hidden: 1024, layers: 16, seq_len: 1024}\n"
         "batch: {global_batch: " + std::to_string(microbatches) + ", micro_batch: 1}\n"
         "cluster: {gpus: " + std::to_string(stages) + ", fabric: {kind: star, bandwidth: 10000TB/s, latency: 0s}}\n"
         "parallelism: {pipeline: " + std::to_string(stages) + ", schedule: " + schedule +
         ", virtual_stages: " + std::to_string(virtual_stages) + "}\n"
         "training: {sharding: none}\n";
}

// The share of the pipeline's time (the step less the optimizer) that a GPU idles.
double bubble(const nlohmann::json& r) {
  const double busy = r["t_compute_s"].get<double>();
  return 1.0 - busy / (r["step_time_s"].get<double>() - r["t_optimizer_s"].get<double>());
}

} // namespace

TEST_CASE("pipeline bubble: (p - 1) / (m + p - 1) for GPipe and 1F1B, (p - 1) / (v m + p - 1) interleaved") {
  const long long p = 4, m = 8;
  for (const char* schedule : {"gpipe", "1f1b"}) {
    const auto r = sim::run_isolated(scenario_from_text(pipeline_yaml(p, m, schedule, 1), schedule));
    INFO(schedule);
    CHECK(bubble(r) == rel(double(p - 1) / double(m + p - 1), 0.01));
  }
  const long long v = 2;
  const auto r = sim::run_isolated(scenario_from_text(pipeline_yaml(p, m, "1f1b", v), "interleaved"));
  CHECK(bubble(r) == rel(double(p - 1) / double(v * m + p - 1), 0.01));
  // More micro-batches, smaller bubble.
  const auto r32 = sim::run_isolated(scenario_from_text(pipeline_yaml(p, 32, "1f1b", 1), "m32"));
  CHECK(bubble(r32) == rel(3.0 / 35.0, 0.01));
  // The waits the stages record are the bubble: stage 0 idles (p - 1) (t_f + t_b) while the
  // pipeline fills and drains, as every stage does.
  const auto& stages = r32["parallelism"]["stages"];
  const double per_op = r32["t_compute_s"].get<double>() / 32.0;
  CHECK(stages[0]["t_pp_wait_s"].get<double>() == rel(3.0 * per_op, 0.01));
}

TEST_CASE("tensor parallelism: each layer's all-reduces take 2 (t - 1) (alpha + M / (t B)) on the critical path") {
  const double bandwidth = 100e9, latency = 2e-6, tokens = 4096, hidden = 2048;
  const long long layers = 4;
  for (long long t : {2, 4, 8}) {
    const std::string yaml =
        "gpu: A100-80GB\n"
        "model: {hidden: 2048, layers: 4, seq_len: 4096, heads: 16, ffn: gelu, tied_embeddings: true, lm_head: true}\n"
        "batch: {global_batch: 1, micro_batch: 1}\n"
        "cluster: {gpus: " + std::to_string(t) + ", fabric: {kind: nvlink-node, bandwidth: 100GB/s, latency: 2us}}\n"
        "parallelism: {tensor: " + std::to_string(t) + "}\n"
        "training: {sharding: none}\n";
    const auto r = sim::run_isolated(scenario_from_text(yaml, "tp"));
    // A star of links of latency a: a route crosses two (GPU to switch, switch to GPU).
    const double alpha = 2.0 * latency, message = tokens * hidden * 2.0;
    const double one = 2.0 * double(t - 1) * (alpha + message / (double(t) * bandwidth));
    // Per layer two forward and two backward all-reduces, and one after the embedding lookup.
    const double expected = (4.0 * layers + 1.0) * one;
    INFO("t = " << t);
    CHECK(r["parallelism"]["t_tp_comm_s"].get<double>() == rel(expected, 0.01));
    // Each GPU does 1 / t of the layers' FLOPs (the FLOPs counted, not their time).
    const auto r1 = sim::run_isolated(scenario_from_text(
        "gpu: A100-80GB\nmodel: {hidden: 2048, layers: 4, seq_len: 4096, heads: 16, ffn: gelu, tied_embeddings: true, "
        "lm_head: true}\nbatch: {global_batch: 1, micro_batch: 1}\ncluster: {gpus: 1}\ntraining: {sharding: none}\n",
        "one"));
    CHECK(r["flops"].get<double>() == rel(r1["flops"].get<double>() / double(t), 1e-9));
  }
}

TEST_CASE("a TP group split over two servers is slower by the NVLink / NIC bandwidth ratio") {
  auto run = [](long long gpus_per_node) {
    const std::string yaml =
        "gpu: A100-80GB\n"
        "model: {hidden: 4096, layers: 2, seq_len: 8192, heads: 32, ffn: gelu, tied_embeddings: true}\n"
        "batch: {global_batch: 2, micro_batch: 1}\n"
        "cluster:\n  gpus: 8\n  fabric: {kind: cluster, gpus_per_node: " + std::to_string(gpus_per_node) +
        ", nvlink: {bandwidth: 300GB/s, latency: 0us}, nic: {bandwidth: 200Gb/s, latency: 0us}, leaf_ports: 32, "
        "rail_optimized: true}\n  nccl: {channels: 1}\n"
        "parallelism: {tensor: 4}\n"
        "training: {sharding: none}\n";
    return sim::run_isolated(scenario_from_text(yaml, "split"))["parallelism"]["t_tp_comm_s"].get<double>();
  };
  // 4 GPUs per server: the TP ring stays on NVLink. 2 per server: two of its four hops cross NICs
  // (one channel: a single ring; tests/sim/test_channels.cpp has NCCL's channels).
  CHECK(run(2) / run(4) == rel(300e9 / 25e9, 0.02));
}

TEST_CASE("activation memory: GPipe holds m micro-batches, 1F1B p - s; TP with sequence parallelism divides by t") {
  const long long p = 4, m = 16, t = 2, d = 2048, tokens = 2048;
  auto scenario = [&](const std::string& schedule, bool sp) {
    return scenario_from_text(
        "gpu: A100-80GB\n"
        "model: {hidden: 2048, layers: 8, seq_len: 2048, vocab: 32000, heads: 16, ffn: gelu, tied_embeddings: true}\n"
        "batch: {global_batch: 16, micro_batch: 1}\n"
        "cluster: {gpus: 8, fabric: {kind: star, bandwidth: 100GB/s, latency: 1us}}\n"
        "parallelism: {tensor: 2, pipeline: 4, schedule: " + schedule + ", sequence_parallel: " + (sp ? "true" : "false") + "}\n"
        "training: {sharding: none, activation_recompute: full}\n", schedule);
  };
  // Full recompute keeps each layer's input, 2 d bytes per token (divided over the TP group with
  // sequence parallelism); a stage holds 2 layers.
  const double per_microbatch = 2.0 * 2.0 * double(d) * double(tokens);
  const sim::Scenario one_f_one_b = scenario("1f1b", false), gpipe = scenario("gpipe", false);
  for (long long stage = 0; stage < p; ++stage) {
    CHECK(sim::stage_memory(one_f_one_b, stage).activation_bytes == rel(double(p - stage) * per_microbatch, 1e-9));
    CHECK(sim::stage_memory(gpipe, stage).activation_bytes == rel(double(m) * per_microbatch, 1e-9));
  }
  CHECK(sim::stage_memory(scenario("1f1b", true), 0).activation_bytes == rel(double(p) * per_microbatch / t, 1e-9));
  // The weights: a stage's 2 layers of 12 d^2 (+ biases and norms) over the TP group, and the first
  // stage also the embeddings.
  const double layer = 12.0 * d * d;
  CHECK(sim::stage_memory(one_f_one_b, 1).weight_bytes == rel(2.0 * 2.0 * layer / t, 0.01));
  CHECK(sim::stage_memory(one_f_one_b, 0).weight_bytes > sim::stage_memory(one_f_one_b, 1).weight_bytes);
}

namespace {

// An MoE model (every layer: 8 experts, top-2) over E expert-parallel GPUs on a star.
std::string moe_yaml(long long e, double imbalance) {
  return "gpu: A100-80GB\n"
         "model: {hidden: 1024, layers: 2, seq_len: 1024, vocab: 1024, heads: 8, ffn: gelu, tied_embeddings: true,\n"
         "        moe: {experts: 8, top_k: 2, expert_ffn_hidden: 2048, imbalance: " + std::to_string(imbalance) + "}}\n"
         "batch: {global_batch: " + std::to_string(e) + ", micro_batch: 1}\n"
         "cluster: {gpus: " + std::to_string(e) + ", fabric: {kind: star, bandwidth: 50GB/s, latency: 1us}}\n"
         "parallelism: {expert: " + std::to_string(e) + "}\n"
         "training: {sharding: none}\n";
}

} // namespace

TEST_CASE("expert parallelism: an all-to-all takes (E - 1) M / (E B) + alpha; a hot expert's GPU computes longest") {
  const long long e = 4, layers = 2;
  const double bandwidth = 50e9, alpha = 2e-6, tokens = 1024, d = 1024, top_k = 2; // alpha: two 1 us links
  const auto r = sim::run_isolated(scenario_from_text(moe_yaml(e, 1.0), "ep"));
  // Each GPU sends 1 / E of its routed tokens to each of the E - 1 others at once: its up-link (and
  // every down-link) carries (E - 1) M / E.
  const double message = tokens * top_k * d * 2.0;
  const double one = double(e - 1) * message / (double(e) * bandwidth) + alpha;
  // Dispatch and combine forward, and their gradients backward, per MoE layer.
  CHECK(r["parallelism"]["t_ep_comm_s"].get<double>() == rel(4.0 * layers * one, 0.01));

  const auto hot = sim::run_isolated(scenario_from_text(moe_yaml(e, 2.0), "hot"));
  CHECK(hot["parallelism"]["busiest_gpu"].get<long long>() == 0); // expert-parallel rank 0 holds the hot expert
  CHECK(hot["parallelism"]["t_compute_max_s"].get<double>() > 1.05 * r["parallelism"]["t_compute_max_s"].get<double>());
  // The same tokens in all: the mean compute is unchanged, the step waits for the hot GPU.
  CHECK(hot["t_compute_s"].get<double>() == rel(r["t_compute_s"].get<double>(), 1e-9));
  CHECK(hot["step_time_s"].get<double>() > r["step_time_s"].get<double>());
}

TEST_CASE("context parallelism: 1 / c of the FLOPs per GPU; keys and values go c - 1 steps round the ring") {
  auto yaml = [](long long c, const std::string& bandwidth) {
    return "gpu: A100-80GB\n"
           "model: {hidden: 2048, layers: 4, seq_len: 8192, heads: 16, kv_heads: 4, ffn: gelu, vocab: 1024,\n"
           "        tied_embeddings: true, lm_head: true}\n"
           "batch: {global_batch: 2, micro_batch: 1}\n"
           "cluster: {gpus: " + std::to_string(c) + ", fabric: {kind: star, bandwidth: " + bandwidth +
           ", latency: 1us}}\n" + (c > 1 ? "parallelism: {context: " + std::to_string(c) + "}\n" : "") +
           "training: {sharding: none}\n";
  };
  const long long c = 4, layers = 4, microbatches = 2;
  const auto one = sim::run_isolated(scenario_from_text(yaml(1, "100GB/s"), "one"));
  const auto r = sim::run_isolated(scenario_from_text(yaml(c, "100GB/s"), "cp"));
  // Each GPU takes 1 / c of the tokens, attending over the whole sequence: 1 / c of every FLOP.
  CHECK(r["flops"].get<double>() == rel(one["flops"].get<double>() / double(c), 1e-9));
  // Keys and values of a GPU's tokens: tokens / c x 2 x (kv_heads x d / heads) x 2 B per layer;
  // forward once round the ring (c - 1 steps), backward the blocks and their gradients (twice).
  const double kv = 8192.0 / c * 2.0 * (4.0 * 2048.0 / 16.0) * 2.0;
  const double expected_bytes = microbatches * layers * 3.0 * double(c - 1) * kv;
  // Gradients are all-reduced over the context ranks too: a ring of c over the model's parameters.
  const double params = r["params"].get<double>();
  const double gradient_ring = 2.0 * double(c - 1) / double(c) * 2.0 * params;
  CHECK(r["bytes_sent_per_gpu"].get<double>() == rel(expected_bytes + gradient_ring, 1e-6));
  // On a fast network the exchange hides under the layer's compute; on a slow one it shows.
  CHECK(r["parallelism"]["t_cp_comm_s"].get<double>() < 0.01 * r["t_compute_s"].get<double>());
  const auto slow = sim::run_isolated(scenario_from_text(yaml(c, "1GB/s"), "slow"));
  CHECK(slow["parallelism"]["t_cp_comm_s"].get<double>() > 0.1 * slow["t_compute_s"].get<double>());
}

TEST_CASE("a TP group wider than a server runs, with a warning naming the server size") {
  const auto s = scenario_from_text(
      "gpu: A100-80GB\n"
      "model: {hidden: 2048, layers: 4, seq_len: 2048, heads: 16, ffn: gelu, vocab: 1024, tied_embeddings: true}\n"
      "batch: {global_batch: 1, micro_batch: 1}\n"
      "cluster: {gpus: 16, fabric: {kind: cluster, gpus_per_node: 8, nvlink: {bandwidth: 300GB/s, latency: 1us},\n"
      "          nic: {bandwidth: 200Gb/s, latency: 1us}, leaf_ports: 16, rail_optimized: true}}\n"
      "parallelism: {tensor: 16}\n", "wide");
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].find("tensor 16 spans more than a node's 8 GPUs") != std::string::npos);
}

TEST_CASE("tp_overlap: a layer's TP collectives beside its GEMMs; the step saves what they no longer expose") {
  auto run = [](bool overlap) {
    return sim::run_isolated(scenario_from_text(
        "gpu: A100-80GB\n"
        "model: {hidden: 4096, layers: 4, seq_len: 4096, heads: 32, ffn: gelu, vocab: 1024, tied_embeddings: true}\n"
        "batch: {global_batch: 1, micro_batch: 1}\n"
        "cluster: {gpus: 4, fabric: {kind: nvlink-node, bandwidth: 300GB/s, latency: 1us}}\n"
        "parallelism: {tensor: 4, tp_overlap: " + std::string(overlap ? "true" : "false") + "}\n"
        "training: {sharding: none}\n", "overlap"));
  };
  const auto plain = run(false), overlapped = run(true);
  const double exposed = plain["parallelism"]["t_tp_comm_s"].get<double>();
  const double left = overlapped["parallelism"]["t_tp_comm_s"].get<double>();
  // Precondition: a layer's collectives are shorter than its compute, so only the embedding's
  // (1 of 4 L + 1 all-reduces, not beside any GEMM) stays exposed.
  CHECK(left == rel(exposed / 17.0, 0.01));
  CHECK(plain["step_time_s"].get<double>() - overlapped["step_time_s"].get<double>() == rel(exposed - left, 0.01));
  CHECK(overlapped["t_compute_s"].get<double>() == rel(plain["t_compute_s"].get<double>(), 1e-12));
}
