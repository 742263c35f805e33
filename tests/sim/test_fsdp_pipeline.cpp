// FSDP (zero2 / zero3) with tensor and pipeline parallelism (issue 28), as PyTorch's pipelining runs
// it: a stage's parameters stay gathered and its gradients unreduced over the micro-batches, reduced
// after the last backward and gathered again for the next step. Checked against figures derived here:
// the state bytes per GPU by hand, the data-parallel ring's seconds from the bytes and the NIC rate.
#include "model/memory_footprint.hpp"
#include "model/model_catalog.hpp"
#include "scenario_text.hpp"
#include "sim/engine/isolated_run.hpp"
#include "test_support.hpp"

#include <string>

using namespace memwall;
using memwall::test::rel;
using memwall::test::scenario_from_text;

namespace {

// TP 2 x PP 2 x DP 2 on four zero-latency servers of 2 GPUs with a 200 Gb/s NIC each: the two data
// replicas of a stage sit on different servers, so each data-parallel ring crosses the NICs.
std::string job(const std::string& sharding, long long pipeline = 2) {
  return "gpu: A100-80GB\n"
         "model: {hidden: 4096, layers: 4, seq_len: 2048, heads: 32, ffn: gelu, tied_embeddings: true}\n"
         "batch: {global_batch: 8, micro_batch: 1}\n"
         "cluster: {gpus: " + std::to_string(4 * pipeline) + ", fabric: {kind: cluster, gpus_per_node: 2, "
         "nvlink: {bandwidth: 300GB/s, latency: 0us}, nic: {bandwidth: 200Gb/s, latency: 0us}, nics: per-gpu, "
         "leaf_ports: 32, rail_optimized: true}}\n"
         "parallelism: {tensor: 2, pipeline: " + std::to_string(pipeline) + "}\n"
         "training: {sharding: " + sharding + "}\n";
}

} // namespace

TEST_CASE("FSDP + TP + PP: state per GPU by hand, the gradients and parameters once a step over the stage's replicas") {
  // Stage 0 holds 2 layers of 12 d^2 weights (GELU MLP, no biases), split over TP 2: P = 12 d^2 per GPU.
  // Held during the step: BF16 parameters (2 B) and gradients (2 B) of P, and 1/DP of the fp32
  // parameters, m and v (12 B): (2 + 2 + 12 / 2) P. Besides tensors: the CUDA context (0.5 GB) and
  // NCCL's buffers for the tensor, data and pipeline communicators (3 x 0.688 GB).
  const double d = 4096, p = 2.0 * 12.0 * d * d / 2.0;
  // The ring's two rounds (reduce-scatter, all-gather) each send (DP - 1) / DP of 2 B x P per GPU over
  // its NIC (25 GB/s).
  const double dp_s = 2.0 * (1.0 / 2.0) * 2.0 * p / 25e9;
  for (const char* sharding : {"zero2", "zero3"}) {
    INFO(sharding);
    const auto r = sim::run_isolated(scenario_from_text(job(sharding), "fsdp"));
    const auto& stage0 = r["parallelism"]["stages"][0];
    CHECK(stage0["footprint_bytes"].get<double>() - stage0["activation_bytes"].get<double>() ==
          rel((2.0 + 2.0 + 12.0 / 2.0) * p + 0.5e9 + 3.0 * 0.688e9, 1e-12));
    CHECK(stage0["activation_bytes"].get<double>() > 0);
    CHECK(stage0["t_dp_comm_s"].get<double>() == rel(dp_s, 1e-9));
    // The distributed optimizer (zero1) moves the same bytes at the same place in the step.
    const auto zero1 = sim::run_isolated(scenario_from_text(job("zero1"), "zero1"));
    CHECK(r["step_time_s"].get<double>() == rel(zero1["step_time_s"].get<double>(), 1e-12));
    CHECK(r["bytes_sent_per_gpu"].get<double>() == rel(zero1["bytes_sent_per_gpu"].get<double>(), 1e-12));
  }
}

TEST_CASE("FSDP + TP + PP: Llama 3.1 405B over TP 8 x PP 8 x FSDP 8, a middle stage's state by hand") {
  // 126 layers over 8 stages: 15, 16 x 6, 15. Stage 1 holds 16 layers, each of attention
  // d (d + 2 x 8 x 128) + d d (GQA: 8 KV heads of 128), SwiGLU 3 d f and two norms of d, split over TP 8.
  const model::ArchitectureSpec& llama = *model::ModelCatalog::builtin().find("llama3-405b");
  const double d = 16384, f = 53248;
  const double layer = d * (d + 2.0 * 8.0 * 128.0) + d * d + 3.0 * d * f + 2.0 * d;
  const double p = 16.0 * layer / 8.0;
  model::ParallelLayout l;
  l.tensor = 8;
  l.sequence_parallel = true;
  l.pipeline = 8;
  l.data = 8;
  l.stage_layers = model::default_stage_layers(llama.layers, 8);
  REQUIRE(l.stage_layers[1] == 16);
  model::TrainingPlan plan;
  plan.sharding = model::Sharding::Zero3;
  const model::GpuSpec& gpu = *model::GpuCatalog::builtin().find("H100-SXM");
  const auto m = model::stage_footprint(llama, l, 1, 7, 8192, gpu, model::TrafficConstants{}, plan);
  CHECK(m.weight_bytes == rel(2.0 * p, 1e-12));
  CHECK(m.gradient_bytes == rel(2.0 * p, 1e-12));
  CHECK(m.optimizer_bytes == rel(12.0 * p / 8.0, 1e-12));
  CHECK(m.total_bytes == rel(m.weight_bytes + m.gradient_bytes + m.optimizer_bytes + m.activation_bytes, 1e-12));
}

TEST_CASE("FSDP with experts and no pipeline is refused, naming the key and what to use") {
  // With TP and no pipeline FSDP runs layer by layer (tests/check_dp_overlap.py); experts sharded over
  // their own data-parallel group are not modelled.
  const std::string yaml = "gpu: H100-SXM\n"
                           "model: {like: mixtral-8x7b, layers: 4}\n"
                           "batch: {global_batch: 8, micro_batch: 1}\n"
                           "cluster: {gpus: 8, fabric: dgx-h100-ndr}\n"
                           "parallelism: {tensor: 2, expert: 2}\n"
                           "training: {sharding: zero3}\n";
  try {
    scenario_from_text(yaml, "fsdp-ep");
    FAIL("accepted");
  } catch (const model::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("parallelism") != std::string::npos);
    CHECK(what.find("no pipeline") != std::string::npos);
  }
  CHECK_NOTHROW(scenario_from_text(job("zero3", 1), "fsdp-tp"));
}

TEST_CASE("memory: the CUDA context and one NCCL communicator per parallel group of more than one GPU") {
  // TP 2 x CP 2 x DP 2 x PP 2 (16 GPUs): tensor, data x context, context and pipeline groups: 4
  // communicators. Pure data parallelism over 8 GPUs: 1. One GPU: the context alone.
  auto reserved = [](const std::string& parallelism, long long gpus) {
    const std::string yaml = "gpu: A100-80GB\n"
                             "model: {hidden: 1024, layers: 4, seq_len: 2048, heads: 16, ffn: gelu}\n"
                             "batch: {global_batch: 8, micro_batch: 1}\n"
                             "cluster: {gpus: " + std::to_string(gpus) + ", fabric: seed-ib}\n" + parallelism +
                             "training: {sharding: zero1}\n";
    return sim::run_isolated(scenario_from_text(yaml, "reserve"))["memory"]["reserved_bytes"].get<double>();
  };
  CHECK(reserved("parallelism: {tensor: 2, context: 2, pipeline: 2}\n", 16) == rel(0.5e9 + 4.0 * 0.688e9, 1e-12));
  CHECK(reserved("", 8) == rel(0.5e9 + 0.688e9, 1e-12));
  CHECK(reserved("", 1) == rel(0.5e9, 1e-12));
}
