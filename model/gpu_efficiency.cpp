#include "gpu_efficiency.hpp"

#include "gpu_spec.hpp"
#include "input_node.hpp"

#include <cmath>

namespace memwall::model {

namespace {

std::vector<EfficiencyPoint> parse_curve(const InputNode& node) {
  std::vector<EfficiencyPoint> curve;
  for (const auto& item : node.elements()) {
    item.require_map();
    item.check_keys({"gemm_flops", "efficiency"});
    EfficiencyPoint p{item.child("gemm_flops").as_positive_quantity(Dimension::Flops),
                      item.child("efficiency").as_fraction()};
    if (!curve.empty() && p.gemm_flops <= curve.back().gemm_flops)
      item.child("gemm_flops").fail("curve sizes must increase from one point to the next");
    curve.push_back(p);
  }
  if (curve.empty())
    node.fail("a GEMM efficiency curve needs at least one point");
  return curve;
}

} // namespace

double gemm_size_flops(long long hidden, double tokens) {
  return 2.0 * tokens * double(hidden) * double(hidden);
}

double gemm_efficiency_at(const GpuSpec& gpu, double gemm_flops) {
  const auto& c = gpu.gemm_efficiency_curve;
  if (c.empty())
    return gpu.gemm_efficiency;
  if (gemm_flops <= c.front().gemm_flops)
    return c.front().efficiency;
  for (size_t i = 1; i < c.size(); ++i)
    if (gemm_flops <= c[i].gemm_flops) {
      const double x =
          std::log(gemm_flops / c[i - 1].gemm_flops) / std::log(c[i].gemm_flops / c[i - 1].gemm_flops);
      return c[i - 1].efficiency + x * (c[i].efficiency - c[i - 1].efficiency);
    }
  return c.back().efficiency;
}

double attention_efficiency_at(const GpuSpec& gpu, double gemm_flops) {
  return gpu.attention_efficiency > 0 ? gpu.attention_efficiency : gemm_efficiency_at(gpu, gemm_flops);
}

GpuSpec carry_stack(const GpuSpec& target, const GpuSpec& profile) {
  GpuSpec g = target;
  g.gemm_efficiency = profile.gemm_efficiency;
  g.gemm_efficiency_curve = profile.gemm_efficiency_curve;
  g.attention_efficiency = profile.attention_efficiency;
  g.hbm_efficiency = profile.hbm_efficiency;
  g.fp8_gemm_efficiency = profile.fp8_gemm_efficiency;
  g.gemm_tile = profile.gemm_tile; // the stack's kernels; the SMs are the target's own
  g.stack = profile.stack;
  g.display_name = target.display_name + ", " + profile.stack + " stack";
  g.source = target.source + "; efficiencies of " + profile.name +
             " carried as fractions of this GPU's rates (the transfer rule, README)";
  return g;
}

void parse_efficiencies(const InputNode& node, GpuSpec& gpu) {
  if (auto c = node.optional_child("gemm_efficiency")) {
    if (c->is_sequence()) {
      gpu.gemm_efficiency_curve = parse_curve(*c);
      gpu.gemm_efficiency = gpu.gemm_efficiency_curve.back().efficiency;
    } else {
      gpu.gemm_efficiency = c->as_fraction();
      gpu.gemm_efficiency_curve.clear();
    }
  }
  if (auto c = node.optional_child("attention_efficiency"))
    gpu.attention_efficiency = c->as_fraction();
  if (auto c = node.optional_child("hbm_efficiency"))
    gpu.hbm_efficiency = c->as_fraction();
  if (auto c = node.optional_child("fp8_gemm_efficiency"))
    gpu.fp8_gemm_efficiency = c->as_fraction();
  if (auto c = node.optional_child("gemm_tile")) {
    c->check_keys({"m", "n"});
    gpu.gemm_tile.m = c->child("m").as_positive_integer();
    gpu.gemm_tile.n = c->child("n").as_positive_integer();
  }
}

} // namespace memwall::model
