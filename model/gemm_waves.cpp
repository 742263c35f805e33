#include "gemm_waves.hpp"

#include "gpu_spec.hpp"

#include <cmath>

namespace memwall::model {

double wave_fill(const GemmShape& g, const GemmTile& tile, long long sms) {
  if (!tile.on() || sms <= 0 || g.m <= 0 || g.n <= 0)
    return 1.0;
  const double tiles = std::ceil(g.m / double(tile.m)) * std::ceil(g.n / double(tile.n));
  const double waves = std::ceil(tiles / double(sms));
  return g.m * g.n / (waves * double(sms) * double(tile.m) * double(tile.n));
}

double wave_fill(const std::vector<GemmShape>& gemms, const GemmTile& tile, long long sms) {
  double flops = 0, slots = 0;
  for (const auto& g : gemms) {
    flops += g.flops();
    slots += g.flops() / wave_fill(g, tile, sms);
  }
  return slots > 0 ? flops / slots : 1.0;
}

namespace {
// A weight GEMM of the forward (tokens x k) (k x n), with its two gradients: the data gradient
// (tokens x n) (n x k) and the weight gradient (k x tokens) (tokens x n).
void add_linear(std::vector<GemmShape>& out, double tokens, double k, double n) {
  out.push_back({tokens, n, k});
  out.push_back({tokens, k, n});
  out.push_back({k, n, tokens});
}
} // namespace

std::vector<GemmShape> dense_layer_gemms(const ArchitectureSpec& arch, double tokens, long long tp) {
  const double d = double(arch.hidden), t = double(tp);
  const double head_dim = d / double(arch.heads);
  const double qkv = (double(arch.heads) + 2.0 * double(kv_heads_of(arch))) * head_dim;
  const double f = double(ffn_hidden_of(arch));
  const double up = arch.ffn == FfnKind::SwiGlu ? 2.0 * f : f; // gate and up as one GEMM
  std::vector<GemmShape> out;
  add_linear(out, tokens, d, qkv / t);
  add_linear(out, tokens, double(arch.heads) * head_dim / t, d);
  add_linear(out, tokens, d, up / t);
  add_linear(out, tokens, f / t, d);
  return out;
}

std::vector<GemmShape> lm_head_gemms(const ArchitectureSpec& arch, double tokens, long long tp) {
  std::vector<GemmShape> out;
  add_linear(out, tokens, double(arch.hidden), double(arch.vocab) / double(tp));
  return out;
}

double gpu_wave_fill(const GpuSpec& gpu, const std::vector<GemmShape>& gemms) {
  return wave_fill(gemms, gpu.gemm_tile, gpu.sms);
}

} // namespace memwall::model
