// One GPU's figures, as the seed's GPUS table holds them, plus HBM capacity.
#pragma once

#include "gpu_efficiency.hpp"
#include "gpu_power.hpp"

#include <string>
#include <vector>

namespace memwall::model {

// How a GPU's board power follows its work (model/gpu_power.hpp).
//   per_flop: the seed's model: static power plus energy per useful FLOP and per HBM byte.
//   activity: as a meter reads it: a GPU in a job is clocked and awake even while it waits
//             (p_clocked on top of static), and a running kernel's SMs draw p_active (scaled by
//             f V^2) whatever share of their peak the kernel achieves, on top of the per-FLOP and
//             per-byte energies.
enum class PowerModel { PerFlop, Activity };
const char* power_model_name(PowerModel m);

struct GpuSpec {
  std::string name;            // catalog key used in scenarios, e.g. "A100-80GB"
  std::string display_name;    // as the seed prints it, e.g. "B200 (approx.)"
  double peak_flops_per_s = 0; // dense BF16 tensor-core peak
  double peak_fp8_flops_per_s = 0; // dense FP8 tensor-core peak; 0: no FP8 tensor cores
  double hbm_bytes_per_s = 0;  // HBM bandwidth
  double l2_bytes = 0;         // on-chip L2 capacity (for the re-blocking term)
  double hbm_capacity_bytes = 0;
  double e_hbm_j_per_byte = 0;  // all-in HBM energy (interface + on-die transport)
  double e_flop_j_per_flop = 0; // all-in on-chip energy per FLOP at peak
  double e_dp_j_per_flop = 0;   // datapath-only estimate (reported, not charged)
  double p_static_w = 0;        // idle / leakage power: the board with nothing to do, clocks down
  PowerModel power_model = PowerModel::PerFlop;
  double p_clocked_w = 0; // activity model: clocked and waiting (a collective or a bubble), above static
  double p_active_w = 0;  // activity model: all SMs running a kernel at the maximum clock, above clocked
  double tdp_w = 0;
  double power_limit_w = 0;     // a site or user power cap (`power_limit: tdp` or watts); 0: none
  DvfsCurve dvfs;               // clock / voltage curve the cap moves along (gpu_power.hpp)
  double nvlink_bytes_per_s = 0; // per direction
  double ib_bytes_per_s = 0;     // one NIC, per direction
  double gemm_efficiency = 1;    // achieved fraction of peak on GEMMs (1: the seed's ideal)
  std::vector<EfficiencyPoint> gemm_efficiency_curve; // by GEMM size; when set, it replaces the constant
  double attention_efficiency = 0;                    // attention FLOPs' fraction of peak; 0: as the GEMMs
  double hbm_efficiency = 1; // achieved fraction of HBM bandwidth (1: the seed's ideal)
  double fp8_gemm_efficiency = 0; // FP8 GEMMs' achieved fraction of the FP8 peak; 0: as the BF16 GEMMs
  long long sms = 0;              // streaming multiprocessors (data sheet); 0: not stated
  GemmTile gemm_tile;             // a stack's GEMM tile: tile and wave quantization over the SMs
  std::string source;        // where the figures come from
  std::string stack;         // a calibrated profile's software stack (megatron-core, ...); empty: a data sheet
};

// What the board draws in a job whatever it does: static, plus the clocked wait of the activity model.
inline double awake_power_w(const GpuSpec& g) {
  return g.power_model == PowerModel::Activity ? g.p_static_w + g.p_clocked_w : g.p_static_w;
}
// The SMs' busy power at a clock (fraction of the maximum) and its voltage: C V^2 f.
inline double active_power_w(const GpuSpec& g, double clock, double voltage) {
  return g.power_model == PowerModel::Activity ? g.p_active_w * clock * voltage * voltage : 0.0;
}

// Machine balance beta_t: FLOP per HBM byte at which compute and HBM time are equal.
inline double machine_balance_flops_per_byte(const GpuSpec& g) {
  return g.peak_flops_per_s / g.hbm_bytes_per_s;
}
// Energy balance beta_E: FLOP per HBM byte at which arithmetic and HBM energy are equal.
inline double energy_balance_flops_per_byte(const GpuSpec& g) {
  return g.e_hbm_j_per_byte / g.e_flop_j_per_flop;
}

} // namespace memwall::model
