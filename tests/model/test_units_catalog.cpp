// Quantities with units, the GPU catalog and its error messages.
#include "model/gpu_catalog.hpp"
#include "model/input_error.hpp"
#include "model/units.hpp"
#include "test_support.hpp"

using namespace memwall;
using memwall::model::Dimension;
using memwall::test::rel;

namespace {
double quantity(const char* text, Dimension d) {
  std::string error;
  auto v = model::parse_quantity(text, d, &error);
  INFO(error);
  REQUIRE(v.has_value());
  return *v;
}
bool rejected(const char* text, Dimension d) {
  std::string error;
  return !model::parse_quantity(text, d, &error).has_value() && !error.empty();
}
} // namespace

TEST_CASE("bandwidths: bytes and bits per second, decimal prefixes") {
  CHECK(quantity("25GB/s", Dimension::Bandwidth) == rel(25e9));
  CHECK(quantity("200Gb/s", Dimension::Bandwidth) == rel(25e9));
  CHECK(quantity("2.039TB/s", Dimension::Bandwidth) == rel(2.039e12));
  CHECK(quantity("1e9", Dimension::Bandwidth) == 1e9);
  CHECK(quantity(" 300 GB/s ", Dimension::Bandwidth) == rel(300e9));
  CHECK(rejected("25GiB/sec", Dimension::Bandwidth));
  CHECK(rejected("1us", Dimension::Bandwidth));
  CHECK(rejected("fast", Dimension::Bandwidth));
}

TEST_CASE("times, sizes, rates, energies, powers") {
  CHECK(quantity("1us", Dimension::Time) == rel(1e-6));
  CHECK(quantity("0.5ms", Dimension::Time) == rel(5e-4));
  CHECK(quantity("0s", Dimension::Time) == 0.0);
  CHECK(quantity("80GB", Dimension::Bytes) == rel(80e9));
  CHECK(quantity("64GiB", Dimension::Bytes) == rel(64.0 * 1024 * 1024 * 1024));
  CHECK(quantity("312TFLOP/s", Dimension::FlopRate) == rel(312e12));
  CHECK(quantity("2.25PFLOP/s", Dimension::FlopRate) == rel(2.25e15));
  CHECK(quantity("60pJ", Dimension::Energy) == rel(60e-12));
  CHECK(quantity("400W", Dimension::Power) == 400.0);
  // The README's power limits run from 1 mW to 10 MW: both ends can be written in their own unit.
  CHECK(quantity("1mW", Dimension::Power) == rel(1e-3));
  CHECK(quantity("10MW", Dimension::Power) == rel(1e7));
  CHECK(quantity("1.2kW", Dimension::Power) == rel(1200.0));
  CHECK(rejected("5GW", Dimension::Power));
  CHECK(rejected("5w", Dimension::Power));
  CHECK(rejected("80Gb", Dimension::Bytes));
  CHECK(rejected("5", Dimension::Time) == false);
}

TEST_CASE("the shipped catalog holds the seed's four GPUs with the seed's figures") {
  const auto& c = model::GpuCatalog::builtin();
  const model::GpuSpec* a = c.find("A100-80GB");
  REQUIRE(a);
  CHECK(a->peak_flops_per_s == rel(312e12));
  CHECK(a->hbm_bytes_per_s == rel(2.039e12));
  CHECK(a->l2_bytes == rel(40e6));
  CHECK(a->e_hbm_j_per_byte == rel(60e-12));
  CHECK(a->e_flop_j_per_flop == rel(0.90e-12));
  CHECK(a->e_dp_j_per_flop == rel(0.10e-12));
  CHECK(a->p_static_w == 60.0);
  CHECK(a->tdp_w == 400.0);
  CHECK(a->nvlink_bytes_per_s == rel(300e9));
  CHECK(a->ib_bytes_per_s == rel(25e9));
  // 80 GiB of HBM less the driver's reserve, as CUDA reports it: 81158 MiB (deviceQuery: 85100068864 B).
  CHECK(a->hbm_capacity_bytes == rel(85100068864.0));
  const model::GpuSpec* b = c.find("B200 (approx.)");
  REQUIRE(b);
  CHECK(b == c.find("B200"));
  CHECK(b->peak_flops_per_s == rel(2.25e15));
  CHECK(c.find("H100-SXM")->hbm_bytes_per_s == rel(3.35e12));
  CHECK(c.find("A100-40GB")->hbm_bytes_per_s == rel(1.555e12));
  for (const auto& g : c.gpus()) {
    INFO(g.name);
    CHECK_FALSE(g.source.empty());
  }
}

TEST_CASE("a bad catalog entry names file, line and key") {
  const std::string text = "gpus:\n"
                           "  - name: X\n"
                           "    peak: 1TFLOP/s\n"
                           "    hbm_bandwidth: -3TB/s\n";
  try {
    model::GpuCatalog::from_node(model::InputNode::load_string(text, "cat.yaml"));
    FAIL("accepted a negative bandwidth");
  } catch (const model::InputError& e) {
    CHECK(e.file() == "cat.yaml");
    CHECK(e.line() == 4);
    CHECK(e.key() == "gpus[0].hbm_bandwidth");
  }
}

TEST_CASE("duplicate catalog names and inline GPUs with `like`") {
  const std::string one = "  - {name: X, peak: 1, hbm_bandwidth: 1, l2: 1, hbm_capacity: 1, e_hbm: 1, e_flop: 1,"
                          " e_dp: 1, p_static: 0, tdp: 1, nvlink: 1, ib: 1}\n";
  CHECK_THROWS_AS(model::GpuCatalog::from_node(model::InputNode::load_string("gpus:\n" + one + one, "c.yaml")),
                  model::InputError);
  const auto& base = *model::GpuCatalog::builtin().find("A100-80GB");
  const auto node = model::InputNode::load_string("{like: A100-80GB, hbm_bandwidth: 4TB/s}", "s.yaml");
  const model::GpuSpec g = model::parse_gpu(node, &base);
  CHECK(g.hbm_bytes_per_s == rel(4e12));
  CHECK(g.peak_flops_per_s == base.peak_flops_per_s);
}
