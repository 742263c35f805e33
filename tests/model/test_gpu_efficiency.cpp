// GEMM efficiency curves (log-size interpolation, flat beyond the ends), attention efficiency and
// their validation; the expected values are worked out by hand in each case.
#include "model/gpu_catalog.hpp"
#include "model/gpu_efficiency.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace memwall;
using memwall::test::rel;

namespace {

model::GpuSpec inline_gpu(const std::string& yaml) {
  return model::parse_gpu(model::InputNode::load_string(yaml, "g.yaml"), &test::gpu("H100-SXM"));
}

} // namespace

TEST_CASE("a GEMM efficiency curve interpolates in log(size) and is flat beyond its ends") {
  const model::GpuSpec g = inline_gpu(
      "{like: H100-SXM, gemm_efficiency: [{gemm_flops: 1GFLOP, efficiency: 0.4}, {gemm_flops: 100GFLOP, "
      "efficiency: 0.6}, {gemm_flops: 1TFLOP, efficiency: 0.7}]}");
  CHECK(model::gemm_efficiency_at(g, 1e6) == rel(0.4));
  CHECK(model::gemm_efficiency_at(g, 1e9) == rel(0.4));
  CHECK(model::gemm_efficiency_at(g, 1e10) == rel(0.5)); // geometric midpoint of 1 and 100 GFLOP
  CHECK(model::gemm_efficiency_at(g, 1e11) == rel(0.6));
  CHECK(model::gemm_efficiency_at(g, std::sqrt(1e11 * 1e12)) == rel(0.65));
  CHECK(model::gemm_efficiency_at(g, 1e15) == rel(0.7));
  // Without attention_efficiency, attention runs at the GEMMs' efficiency for that size.
  CHECK(model::attention_efficiency_at(g, 1e10) == rel(0.5));
  // Curve key: one d x d GEMM on T tokens, 2 T d^2.
  CHECK(model::gemm_size_flops(4096, 2048) == rel(2.0 * 2048 * 4096.0 * 4096.0));
}

TEST_CASE("a constant GEMM efficiency and an attention efficiency of its own") {
  const model::GpuSpec g = inline_gpu("{like: H100-SXM, gemm_efficiency: 0.6, attention_efficiency: 0.3}");
  CHECK(model::gemm_efficiency_at(g, 1e6) == rel(0.6));
  CHECK(model::gemm_efficiency_at(g, 1e15) == rel(0.6));
  CHECK(model::attention_efficiency_at(g, 1e9) == rel(0.3));
  // The seed's GPUs keep the ideal 1.
  const model::GpuSpec& seed = test::gpu("A100-80GB");
  CHECK(model::gemm_efficiency_at(seed, 1e12) == 1.0);
  CHECK(model::attention_efficiency_at(seed, 1e12) == 1.0);
}

TEST_CASE("bad efficiency curves name the key and the reason") {
  auto message = [](const std::string& yaml) {
    try {
      inline_gpu(yaml);
    } catch (const model::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message("{like: H100-SXM, gemm_efficiency: [{gemm_flops: 2TFLOP, efficiency: 0.5},\n"
                     "  {gemm_flops: 1TFLOP, efficiency: 0.6}]}"),
             Catch::Contains("g.yaml:2") && Catch::Contains("gemm_flops") && Catch::Contains("increase"));
  CHECK_THAT(message("{like: H100-SXM, gemm_efficiency: [{gemm_flops: 2TFLOP, efficiency: 1.5}]}"),
             Catch::Contains("efficiency") && Catch::Contains("(0, 1]"));
  CHECK_THAT(message("{like: H100-SXM, gemm_efficiency: [{gemm_flops: 2TFLOP/s, efficiency: 0.5}]}"),
             Catch::Contains("unknown unit 'TFLOP/s'"));
  CHECK_THAT(message("{like: H100-SXM, gemm_efficiency: [{flops: 2TFLOP, efficiency: 0.5}]}"),
             Catch::Contains("flops"));
  CHECK_THAT(message("{like: H100-SXM, gemm_efficiency: []}"), Catch::Contains("at least one point"));
  CHECK_THAT(message("{like: H100-SXM, attention_efficiency: 0}"), Catch::Contains("attention_efficiency"));
}
