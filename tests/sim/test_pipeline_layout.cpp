// Pipeline layouts as Megatron-Core writes them (issue 28 point 2): its layout string, an explicit
// list per virtual stage, and the embedding and loss counted as layers in an even split; checked
// against layer counts derived here and against stage times that follow them.
#include "model/parallel_layout.hpp"
#include "scenario_text.hpp"
#include "sim/engine/isolated_run.hpp"
#include "test_support.hpp"

#include <numeric>
#include <string>
#include <vector>

using namespace memwall;
using memwall::test::rel;
using memwall::test::scenario_from_text;

TEST_CASE("pipeline layout: Megatron-Core's string, repeats written out, E and L in place") {
  // DeepSeek-V3's 61 layers over PP 8 x VP 4 = 32 virtual stages: 1 with the embedding, 30 of 2,
  // the loss alone.
  auto p = model::parse_pipeline_layout("Et|(tt|)*30L");
  REQUIRE(p.virtual_layers.size() == 32);
  CHECK(p.virtual_layers.front() == 1);
  CHECK(p.virtual_layers.back() == 0);
  CHECK(std::accumulate(p.virtual_layers.begin(), p.virtual_layers.end(), 0LL) == 61);
  CHECK(p.embedding);
  CHECK(p.loss);
  p = model::parse_pipeline_layout("E, t*3 | t*2 , t | (t|)*2 tL");
  CHECK(p.virtual_layers == std::vector<long long>{3, 3, 1, 1, 1}); // Ettt|ttt|t|t|tL
  p = model::parse_pipeline_layout("Et|(tt|)*30mL"); // Megatron-Bridge's DeepSeek-V3 H100 layout
  CHECK(p.virtual_layers.size() == 32);
  CHECK(p.virtual_layers.back() == 1); // the MTP layer with the loss
  CHECK(p.mtp == 1);
  CHECK_THROWS_WITH(model::parse_pipeline_layout("Et|mtL"), Catch::Contains("multi-token"));
  CHECK_THROWS_WITH(model::parse_pipeline_layout("tE|tL"), Catch::Contains("'E'"));
  CHECK_THROWS_WITH(model::parse_pipeline_layout("Et|Lt"), Catch::Contains("'L'"));
  CHECK_THROWS_WITH(model::parse_pipeline_layout("Et|x|L"), Catch::Contains("unknown"));
  CHECK_THROWS(model::parse_pipeline_layout("E(t|L"));
  CHECK_THROWS(model::parse_pipeline_layout("E(t|)*99999|L"));
}

namespace {

// A dense 8-GPU job on a star (small widths: the run is quick), `layers` layers, PP p x VP v.
std::string job(long long layers, long long p, long long v, const std::string& extra) {
  return "gpu: H100-SXM\n"
         "model: {hidden: 512, layers: " + std::to_string(layers) + ", seq_len: 512, vocab: 1024, heads: 8, ffn: gelu}\n"
         "batch: {global_batch: " + std::to_string(2 * p) + ", micro_batch: 1}\n"
         "cluster: {gpus: " + std::to_string(p) + ", fabric: {kind: star, bandwidth: 50GB/s, latency: 1us}}\n"
         "parallelism: {pipeline: " + std::to_string(p) + ", virtual_stages: " + std::to_string(v) + extra + "}\n"
         "training: {sharding: none}\n";
}

std::vector<long long> stage_layers(const nlohmann::json& r) {
  std::vector<long long> out;
  for (const auto& st : r["parallelism"]["stages"])
    out.push_back(st["layers"].get<long long>());
  return out;
}

double stage_compute_s(const nlohmann::json& r, size_t stage) {
  return r["parallelism"]["stages"][stage]["t_compute_s"].get<double>();
}

} // namespace

TEST_CASE("pipeline layout: Llama 3.1 405B's 126 layers over PP 8 x VP 8 with the embedding and loss counted") {
  // 1 + 126 + 1 = 128 over 64 virtual stages: 2 each, one layer beside the embedding and the loss.
  // Stage 0 holds virtual stages 0, 8, ..., 56: 1 + 7 x 2 = 15; stage 7 likewise 15; the others 16.
  const auto counted = sim::run_isolated(
      scenario_from_text(job(126, 8, 8, ", account_for_embedding: true, account_for_loss: true"), "405b"));
  CHECK(stage_layers(counted) == std::vector<long long>{15, 16, 16, 16, 16, 16, 16, 15});
  // The same split written as Megatron-Core's string runs the same step.
  const auto written = sim::run_isolated(scenario_from_text(job(126, 8, 8, ", pipeline_layout: \"Et|(tt|)*62tL\""), "405b"));
  CHECK(written["step_time_s"].get<double>() == counted["step_time_s"].get<double>());
  // Without them 126 layers do not split over 8 x 8 (16 per stage would need 128): refused.
  CHECK_THROWS(scenario_from_text(job(126, 8, 8, ""), "405b"));
}

TEST_CASE("pipeline layout: an uneven split's stage compute follows its layer counts") {
  // PP 2 with [1, 3], [3, 1] and the even [2, 2]: a stage's compute is its layers x one layer's c,
  // plus the embedding's on stage 0 and the head's on stage 1, so moving one layer moves c.
  const auto a = sim::run_isolated(scenario_from_text(job(4, 2, 1, ", pipeline_layout: [1, 3]"), "a"));
  const auto b = sim::run_isolated(scenario_from_text(job(4, 2, 1, ", pipeline_layout: [3, 1]"), "b"));
  const auto even = sim::run_isolated(scenario_from_text(job(4, 2, 1, ""), "even"));
  CHECK(stage_layers(a) == std::vector<long long>{1, 3});
  CHECK(stage_layers(b) == std::vector<long long>{3, 1});
  const double c = stage_compute_s(even, 0) - stage_compute_s(a, 0);
  CHECK(c > 0);
  CHECK(stage_compute_s(b, 0) - stage_compute_s(a, 0) == rel(2.0 * c, 1e-9));
  CHECK(stage_compute_s(a, 1) - stage_compute_s(even, 1) == rel(c, 1e-9));
  CHECK(stage_compute_s(a, 1) - stage_compute_s(b, 1) == rel(2.0 * c, 1e-9));
  // A virtual stage of no layer (PP 2 x VP 2, [0, 2, 2, 0]) runs: stage 0 holds 0 + 2, stage 1 2 + 0.
  const auto empty = sim::run_isolated(scenario_from_text(job(4, 2, 2, ", pipeline_layout: [0, 2, 2, 0]"), "e"));
  CHECK(stage_layers(empty) == std::vector<long long>{2, 2});
  CHECK(empty["step_time_s"].get<double>() > 0);
}

TEST_CASE("pipeline layout: a multi-token prediction layer ('m') adds its projection and a second LM head") {
  // 3 layers + 1 MTP module against 4 plain layers, both Ett|t?L over 2 stages: the same stage 0,
  // and per token 3 x (2 x 2d x d + 2 d V) more FLOPs (its [h; e] projection and the shared head again).
  auto text = [](const std::string& model_extra, long long layers, const std::string& layout) {
    return "gpu: H100-SXM\n"
           "model: {hidden: 512, layers: " + std::to_string(layers) + ", seq_len: 512, vocab: 1024, heads: 8, "
           "ffn: gelu, lm_head: true, tied_embeddings: false" + model_extra + "}\n"
           "batch: {global_batch: 4, micro_batch: 1}\n"
           "cluster: {gpus: 2, fabric: {kind: star, bandwidth: 50GB/s, latency: 1us}}\n"
           "parallelism: {pipeline: 2, pipeline_layout: \"" + layout + "\"}\n"
           "training: {sharding: none}\n";
  };
  const auto mtp = sim::run_isolated(scenario_from_text(text(", mtp_layers: 1", 3, "Ett|tmL"), "mtp"));
  const auto plain = sim::run_isolated(scenario_from_text(text("", 4, "Ett|ttL"), "plain"));
  CHECK(stage_layers(mtp) == std::vector<long long>{2, 2});
  CHECK(stage_compute_s(mtp, 0) == rel(stage_compute_s(plain, 0), 1e-12));
  CHECK(stage_compute_s(mtp, 1) > stage_compute_s(plain, 1));
  const double d = 512, vocab = 1024, tokens = 4 * 512, gpus = 2;
  CHECK(mtp["flops"].get<double>() - plain["flops"].get<double>() ==
        rel(3 * tokens * (2 * 2 * d * d + 2 * d * vocab) / gpus, 1e-9));
  // Its module's parameters (the projection; no norms here) on top of the plain model's.
  CHECK(mtp["params"].get<double>() - plain["params"].get<double>() == rel(2 * d * d, 1e-12));
}
