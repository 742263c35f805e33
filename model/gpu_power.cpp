#include "model/gpu_power.hpp"

#include "model/gpu_spec.hpp"

#include <algorithm>

namespace memwall::model {

const char* power_model_name(PowerModel m) {
  return m == PowerModel::Activity ? "activity" : "per_flop";
}

double DvfsCurve::voltage_at(double clock) const {
  if (clock >= 1.0)
    return 1.0;
  if (clock <= min_clock)
    return min_voltage;
  return min_voltage + (1.0 - min_voltage) * (clock - min_clock) / (1.0 - min_clock);
}

PhaseAtClock phase_at_clock(const GpuSpec& gpu, const PhaseDemand& phase, double clock) {
  PhaseAtClock at;
  at.clock = clock;
  at.voltage = gpu.dvfs.voltage_at(clock);
  at.time_s = std::max(phase.compute_s / clock, phase.memory_s);
  if (at.time_s <= 0) {
    at.power_w = awake_power_w(gpu);
    return at;
  }
  at.power_w = awake_power_w(gpu) + active_power_w(gpu, clock, at.voltage) + phase.arith_j_per_flop * at.voltage * at.voltage * phase.flops / at.time_s +
               gpu.e_hbm_j_per_byte * phase.hbm_bytes / at.time_s;
  return at;
}

PhaseAtClock phase_under_limit(const GpuSpec& gpu, const PhaseDemand& phase, double limit_w) {
  const PhaseAtClock full = phase_at_clock(gpu, phase, 1.0);
  if (limit_w <= 0) // no cap
    return full;
  // A relative margin keeps a phase that meets the limit exactly (the seed's budget) at full clock.
  if (full.power_w <= limit_w * (1.0 + 1e-12))
    return full;
  PhaseAtClock low = phase_at_clock(gpu, phase, gpu.dvfs.min_clock);
  if (low.power_w > limit_w) {
    low.over_limit = true;
    return low;
  }
  // P(f) rises with f: bisect to 1e-12 of the clock range (about 40 steps).
  double lo = gpu.dvfs.min_clock, hi = 1.0;
  while (hi - lo > 1e-12) {
    const double mid = 0.5 * (lo + hi);
    if (phase_at_clock(gpu, phase, mid).power_w <= limit_w)
      lo = mid;
    else
      hi = mid;
  }
  return phase_at_clock(gpu, phase, lo);
}

} // namespace memwall::model
