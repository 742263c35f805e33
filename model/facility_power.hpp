// From the GPUs' joules to what a data centre meters and pays: node and facility power per step, and
// a whole training run's days, GPU-hours, MWh, money and carbon. Pure arithmetic, no SimGrid.
//
//   node   = (GPUs (arithmetic + HBM + static) + host per server + NICs) / PSU efficiency
//   IT     = node + switch ports (for the step's time) + links' energy per byte carried
//   facility = IT x PUE
#pragma once

#include <string>

namespace memwall::model {

// Scenario `power:` block. Zero watts and PUE 1 by default: node and facility then equal the GPUs
// (plus the links' per-byte energy), the seed's accounting.
struct FacilityPowerSpec {
  // CPUs, memory, fans, NVSwitches, PSU losses: all a server draws beyond its GPUs.
  double host_w_per_node = 0;
  double nic_w = 0;         // per NIC of the fabric (a star: one per GPU)
  double switch_port_w = 0; // per switch port of the fabric
  double pue = 1;           // facility over IT power (cooling, power distribution)
  // The servers' power supplies: DC out over AC in (1: the meter reads DC, or losses are in `node`).
  double psu_efficiency = 1;
  std::string server; // the catalog server host_w_per_node came from (model/servers.yaml), or empty
  bool given() const {
    return host_w_per_node > 0 || nic_w > 0 || switch_port_w > 0 || pue != 1.0 || psu_efficiency != 1.0;
  }
};

// What the fabric holds, counted from its graph.
struct FabricInventory {
  long long servers = 1;
  long long nics = 0;
  long long switch_ports = 0;
  long long switches = 0;
  long long access_links = 0; // cables with a GPU or NIC at one end: a job loses that GPU with it
  long long fabric_links = 0; // cables between switches
  // The fewest other switches any switch is cabled to: 2 or more and a switch-to-switch cable has
  // another path (traffic re-routes), and losing one of them costs at most 1 / (this - 1) more time
  // on that switch's links.
  long long min_switch_neighbours = 0;
};

// One step of the whole cluster, joules, and powers over the step.
struct FacilityStep {
  double gpu_j = 0; // all GPUs: arithmetic + HBM + static
  double host_j = 0;
  double nic_j = 0;
  double psu_j = 0;           // power-supply losses: (gpu + host + nic) (1 / efficiency - 1)
  double node_j = 0;          // gpu + host + nic + psu
  double switch_j = 0;        // switch ports
  double link_j = 0;          // the links' energy per byte carried (network energy of the seed's model)
  double it_j = 0;            // node + switch + link
  double facility_j = 0;      // it x PUE
  double node_w_mean = 0;     // one server, mean over the step
  double node_w_peak = 0;     // one server at its GPUs' peak phase power
  double facility_w_mean = 0; // the whole facility
};

// What one server draws beyond its GPUs, DC: its host and its share of the fabric's NICs.
inline double host_and_nics_w_per_server(const FacilityPowerSpec& spec, const FabricInventory& fabric) {
  return spec.host_w_per_node + spec.nic_w * double(fabric.nics) / double(fabric.servers > 0 ? fabric.servers : 1);
}

// gpu_j_per_gpu and link_j_per_gpu: means per GPU for one step; gpu_w_peak: the highest phase power
// of a GPU (static included). A server's GPUs compute in step under data parallelism, so its peak is
// gpus-per-server x that (an upper bound with pipelines).
FacilityStep facility_step(const FacilityPowerSpec& spec, const FabricInventory& fabric, long long gpus,
                           double step_s, double gpu_j_per_gpu, double link_j_per_gpu, double gpu_w_peak);

// Scenario `run:` and `cost:` blocks.
struct RunBudgetSpec {
  double tokens = 0;         // run length in tokens, or
  double steps = 0;          // in steps, or
  double duration_s = 0;     // in wall-clock time (one of the three; 0: no projection)
  double gpu_hour_price = 0; // money per GPU-hour (rent or amortised purchase)
  double kwh_price = 0;      // money per facility kWh
  double grid_g_per_kwh = 0; // carbon intensity of the grid, g CO2e per kWh
  bool given() const { return tokens > 0 || steps > 0 || duration_s > 0; }
};

struct RunProjection {
  double steps = 0;
  double days = 0;
  double gpu_hours = 0;
  double facility_mwh = 0;
  double gpu_cost = 0;
  double energy_cost = 0;
  double cost = 0;
  double co2_t = 0;
};

RunProjection project_run(const RunBudgetSpec& run, long long gpus, double step_s, double tokens_per_step,
                          double facility_j_per_step);

} // namespace memwall::model
