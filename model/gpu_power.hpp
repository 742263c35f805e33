// A GPU's power while it runs a phase, and the clock at which a phase meets a power limit.
//
// Power model (the seed's energies as rates): a phase that does F FLOPs and moves B HBM bytes in t
// seconds draws p_static + e_flop F / t + e_hbm B / t. When that exceeds the GPU's power limit, the
// GPU lowers its core clock f (as NVIDIA's power capping does) until it fits:
//   - the tensor cores' rate scales with f, so the phase's compute time is t_compute / f;
//     HBM has its own clock, so its time t_memory does not change; t(f) = max(t_compute / f, t_memory);
//   - switching energy per FLOP scales with V(f)^2 (CMOS dynamic power C V^2 f); V(f) is the GPU's
//     DVFS curve, linear in f from (min_clock, min_voltage) to (1, 1), as fractions of the maximum;
//   - static power and HBM energy per byte do not change with the core clock.
// So P(f) = p_static + e_flop V(f)^2 F / t(f) + e_hbm B / t(f) rises with f, and the capped clock is
// the largest f in [min_clock, 1] with P(f) <= limit. Compute-bound phases slow by about 1 / f;
// memory-bound ones only lose arithmetic power (their time is the HBM's) until t_compute / f
// passes t_memory.
//
// The activity model (GpuSpec::power_model) adds what a meter sees beyond useful work: a GPU in a
// job is clocked even while it waits (p_clocked, charged with static power for all its time), and a
// kernel keeps all SMs issuing, fetching and clocking whatever share of peak it achieves (p_active,
// C V^2 f like the arithmetic): P(f) = p_static + p_clocked + p_active f V(f)^2 + the per-FLOP and
// per-byte terms. It still rises with f, so the same bisection finds the capped clock.
#pragma once

#include <string>

namespace memwall::model {

struct GpuSpec;

struct DvfsCurve {
  double max_clock_mhz = 0; // for reports; the model works in fractions of it
  double min_clock = 0.5;   // lowest clock the cap may set, as a fraction of the maximum
  double min_voltage = 0.7; // core voltage there, as a fraction of the voltage at the maximum clock
  std::string source;
  double voltage_at(double clock) const; // linear between (min_clock, min_voltage) and (1, 1)
};

// What a phase does at the maximum clock.
struct PhaseDemand {
  double flops = 0;
  double hbm_bytes = 0;
  double compute_s = 0;        // tensor-core time at the maximum clock (efficiencies included)
  double memory_s = 0;         // HBM time
  double arith_j_per_flop = 0; // at the maximum clock (e_flop; FP8 GEMMs: less, see phase_plan)
};

struct PhaseAtClock {
  double clock = 1;   // fraction of the maximum
  double voltage = 1; // fraction of the maximum
  double time_s = 0;
  double power_w = 0;
  bool over_limit = false; // even the lowest clock draws more than the limit (HBM + static alone)
};

// The phase at clock `clock`.
PhaseAtClock phase_at_clock(const GpuSpec& gpu, const PhaseDemand& phase, double clock);

// The phase at the highest clock whose power is within `limit_w` (the maximum clock when it already
// is, bit for bit as without a limit; and when limit_w is 0, no cap). The default is no cap
// (GpuSpec::power_limit_w 0), the seed's behaviour: its energies per FLOP and byte can add up to more
// than the board power for phases near the ridge point (the run then warns; `power_limit: tdp`
// caps them).
PhaseAtClock phase_under_limit(const GpuSpec& gpu, const PhaseDemand& phase, double limit_w);


} // namespace memwall::model
