// Tile and wave quantization of GEMMs (issue 29): a GEMM whose tiles fill every SM of every wave
// runs at the profile's efficiency, one tile more costs a whole wave, a ragged edge pads its tile;
// a layer's GEMMs are its weights' three products each. Expected values worked out by hand.
#include "model/gemm_waves.hpp"
#include "model/gpu_catalog.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

using namespace memwall;
using memwall::test::rel;

namespace {
// Time of a GEMM at a rate R scaled by its fill, in units of 1 / R.
double time_units(const model::GemmShape& g, const model::GemmTile& tile, long long sms) {
  return g.flops() / model::wave_fill(g, tile, sms);
}
} // namespace

TEST_CASE("a GEMM that fills every SM of its waves runs at the profile's rate; one tile more costs a wave") {
  const model::GemmTile tile{128, 256};
  const long long sms = 132; // H100 SXM
  const model::GemmShape full{128.0 * 132, 256, 4096}; // 132 tiles: one full wave
  CHECK(model::wave_fill(full, tile, sms) == rel(1.0));
  const model::GemmShape two_waves{128.0 * 264, 256, 4096};
  CHECK(model::wave_fill(two_waves, tile, sms) == rel(1.0));
  // One row more: a 133rd tile, a second wave for it alone; the time doubles (to the row's share).
  const model::GemmShape one_more{128.0 * 132 + 1, 256, 4096};
  CHECK(model::wave_fill(one_more, tile, sms) == rel((128.0 * 132 + 1) / (2 * 128.0 * 132)));
  CHECK(time_units(one_more, tile, sms) / time_units(full, tile, sms) == rel(2.0));
  // A ragged edge: N = 257 needs two tile columns, 264 tiles, two waves, half of them padding.
  const model::GemmShape ragged{128.0 * 132, 257, 4096};
  CHECK(model::wave_fill(ragged, tile, sms) == rel(257.0 / 512.0));
  // No tile model: fill 1 whatever the shape (the seed's behaviour).
  CHECK(model::wave_fill(one_more, model::GemmTile{}, sms) == 1.0);
}

TEST_CASE("a set of GEMMs' fill weighs each by its FLOPs, so their times add") {
  const model::GemmTile tile{128, 256};
  const std::vector<model::GemmShape> set{{128.0 * 132, 256, 4096}, {128.0 * 132 + 1, 256, 4096}};
  const double flops = set[0].flops() + set[1].flops();
  const double time = time_units(set[0], tile, 132) + time_units(set[1], tile, 132);
  CHECK(model::wave_fill(set, tile, 132) == rel(flops / time));
}

TEST_CASE("a dense layer's GEMMs: each weight's forward, data-gradient and weight-gradient products") {
  model::ArchitectureSpec a;
  a.hidden = 4096;
  a.heads = 32;
  a.kv_heads = 8;
  a.ffn = model::FfnKind::SwiGlu;
  a.ffn_hidden = 14336;
  const double tokens = 8192, tp = 4;
  const auto gemms = model::dense_layer_gemms(a, tokens, 4);
  REQUIRE(gemms.size() == 12);
  // Weights on one TP rank: Q, K, V (d x (32 + 2 x 8) x 128), output (d x d), gate + up (2 d f), down.
  const double weights = (4096.0 * 48 * 128 + 4096.0 * 4096 + 2 * 4096.0 * 14336 + 14336.0 * 4096) / tp;
  double flops = 0;
  for (const auto& g : gemms)
    flops += g.flops();
  CHECK(flops == rel(3 * 2 * tokens * weights));
  // The forward QKV GEMM: tokens x d times d x (48 x 128 / 4).
  CHECK(gemms[0].m == tokens);
  CHECK(gemms[0].n == rel(48.0 * 128 / tp));
  CHECK(gemms[0].k == 4096);
  // Its weight gradient contracts over the tokens.
  CHECK(gemms[2].k == tokens);
}

TEST_CASE("gemm_tile needs the GPU's SM count") {
  const auto node = model::InputNode::load_string(
      "{name: X, peak: 1TFLOP/s, hbm_bandwidth: 1TB/s, l2: 1MB, hbm_capacity: 1GB, e_hbm: 1pJ, e_flop: 1pJ, "
      "e_dp: 1pJ, p_static: 1W, tdp: 10W, nvlink: 1GB/s, ib: 1GB/s, gemm_tile: {m: 128, n: 256}}",
      "g.yaml");
  CHECK_THROWS_WITH(model::parse_gpu(node, nullptr), Catch::Contains("gemm_tile") && Catch::Contains("sms"));
}
