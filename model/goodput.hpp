// Goodput over a whole run (issue 31): failures, checkpoints, restarts and spares turn a simulated
// step time into days to train. Pure arithmetic and a seeded event simulation, no SimGrid: the step is
// simulated once, the run is events.
//
// The run, per seed: training advances step by step at the simulated step time; after every K-th step
// a checkpoint (synchronous: the job waits while it is written; asynchronous: the job waits only for
// the snapshot to host memory, the write to storage runs beside training and the checkpoint counts
// once written). Failures arrive as independent Poisson processes, one per component kind, at
// `devices x rate` per hour of wall-clock time (a device can fail while the job is down too). A
// failure that restarts the job loses the steps since the last written checkpoint and takes the job
// down for detection + restart + reading the checkpoint back; a hardware failure sends its server to
// repair and a hot spare takes its place (none left: the job waits for a repaired server, or goes on
// without it). A failure that re-routes (a switch-to-switch link where the fabric has another path)
// does not stop the job: it slows steps by `slowdown` until the link is repaired.
//
// Effective training time (goodput) = steps kept x the step time / wall-clock time, as Meta reports it
// for Llama 3 (Section 3.3.4): restarts, lost work, checkpoint waits and re-routed slow steps are what
// it loses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memwall::model {

// Restart: the job stops and restarts from its last written checkpoint. Reroute (a cable between
// switches with another path) and Slow (a straggler: a throttling GPU, a flapping NIC): it goes on,
// every step `slowdown` slower until repaired.
enum class FailureEffect { Restart, Reroute, Slow };

struct FailureKind {
  std::string name;            // gpu, hbm, nic, link, switch, host, software, or a user's label
  double per_device_hour = 0;  // failures per device per hour of wall-clock time
  double devices = 0;          // how many the job holds
  FailureEffect effect = FailureEffect::Restart;
  bool takes_server = false;   // hardware in a server: the server goes to repair
  double slowdown = 0;         // Reroute, Slow: a step's extra fraction until repaired
  bool per_job = false;        // a rate for the whole job (software), not per device
  double rate_per_s() const { return per_device_hour * devices / 3600.0; }
};

struct ReliabilitySpec {
  std::vector<FailureKind> kinds;
  double detection_s = 0;    // from the failure to the job being stopped (watchdog, health checks)
  double restart_s = 0;      // rescheduling, process start, communicator set-up (reading the checkpoint apart)
  double repair_s = 0;       // a failed server's (or link's) time away
  long long spares = -1;     // hot spare servers; -1: a replacement is always there
  bool shrink = false;       // no spare left: go on with fewer servers (else wait for a repaired one)
  long long servers = 1;
  long long seeds = 1000;
  uint64_t seed = 1;
  bool given() const { return !kinds.empty(); }
  double restart_rate_per_s() const; // of the kinds that restart the job
  double total_rate_per_s() const;   // of all kinds
};

struct CheckpointSpec {
  double bytes = 0;                 // the whole checkpoint (weights and optimizer state)
  double write_bytes_per_s = 0;     // to storage, all writers together
  double read_bytes_per_s = 0;      // back from storage on a restart
  double latency_s = 0;             // per checkpoint written or read (metadata, file creation)
  bool async = false;
  double snapshot_bytes_per_s = 0;  // per GPU, device to host memory (asynchronous checkpoints)
  long long gpus = 1;               // the writers: each holds 1 / gpus of the checkpoint
  double interval_s = 0;            // training time between checkpoints; 0: Young's optimum
  double write_s() const { return latency_s + bytes / write_bytes_per_s; }
  double read_s() const { return latency_s + bytes / read_bytes_per_s; }
  double snapshot_s() const { return bytes / double(gpus) / snapshot_bytes_per_s; }
  double blocking_s() const { return async ? snapshot_s() : write_s(); } // what training waits
};

// Young (1974): the compute time between checkpoints that minimises the expected loss, sqrt(2 C M),
// C the checkpoint's cost to training, M the mean time between failures that restart the job.
double young_interval_s(double checkpoint_s, double mtbf_s);

// The run to simulate: a length in steps, or a wall-clock window (then what it trains is the result).
struct RunWindow {
  double steps = 0;          // train this many steps, or
  double duration_s = 0;     // run for this long
  double step_s = 0;         // the simulated step
  double busy_j_per_step = 0; // facility energy of one step
  double idle_w = 0;         // facility power while training waits (down, checkpoint waits)
};

struct RunEvent {
  enum class Kind { Checkpoint, Written, Failure, Reroute, Slowed, Resumed, End };
  Kind kind = Kind::Checkpoint;
  double t_s = 0;
  double steps_kept = 0; // the last written checkpoint's step count (End: the steps trained)
  double lost_s = 0;     // Failure: training time lost since that checkpoint
  int failure = -1;      // index into the spec's kinds
};
const char* event_name(RunEvent::Kind kind);

struct SeedRun {
  double wall_s = 0;
  double steps_kept = 0;     // steps that count at the end
  double steps_run = 0;      // every step computed, lost ones included
  double interruptions = 0;  // restarts
  double degraded = 0;       // failures that slowed the job without stopping it (re-routes, stragglers)
  std::vector<double> by_kind; // failures of each kind (restarts and re-routes)
  double lost_s = 0, down_s = 0, checkpoint_wait_s = 0, slow_s = 0;
  double energy_j = 0;
  double goodput = 0; // steps kept x the step time / wall_s
  bool finished = true; // false: a run of steps stopped at kRunCapFactor x its failure-free time
};

// One seed's run; `events`, when given, receives its timeline.
SeedRun simulate_run(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint, double interval_steps,
                     const RunWindow& window, uint64_t seed, std::vector<RunEvent>* events = nullptr);

// A run given in steps stops at this many times its failure-free length (a job that failures keep
// from progressing would never end): its seed counts as unfinished and its days as that bound.
constexpr double kRunCapFactor = 100;
// At most this many events (failures expected, checkpoints) over all seeds: the event simulation's
// work bound, about a minute.
constexpr double kMaxExpectedEvents = 2e9;

struct GoodputReport {
  double interval_s = 0, interval_steps = 0, young_interval_s = 0;
  double checkpoint_write_s = 0, checkpoint_blocking_s = 0, checkpoint_read_s = 0;
  double mtbf_s = 0; // of the failures that restart the job
  double interruptions_mean = 0, interruptions_sem = 0, degraded_mean = 0;
  std::vector<double> by_kind_mean;
  double goodput_mean = 0, goodput_p10 = 0, goodput_p50 = 0;
  double days_mean = 0, days_p50 = 0, days_p90 = 0;
  double steps_mean = 0; // steps kept (a wall-clock window's result)
  long long unfinished_seeds = 0;
  double gpu_hours_mean = 0, energy_mwh_mean = 0;
  double lost_h_mean = 0, down_h_mean = 0, checkpoint_h_mean = 0;
  std::vector<double> days, goodputs; // per seed
};

// All seeds (reliability.seeds from reliability.seed on), K from the checkpoint's interval (or Young's).
// std::invalid_argument when more than kMaxExpectedEvents events are expected over all seeds.
GoodputReport simulate_goodput(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint,
                               const RunWindow& window, long long gpus);

// Goodput as one input moves, the rest as given (`seeds` seeds each): the checkpoint interval at
// `factors` x `interval_s` (never below one step), or the job's size at `factors` x its GPUs, every
// per-device failure count with it and the step time unchanged (weak scaling).
struct CurvePoint {
  double x = 0; // the interval in s, or the GPUs
  double goodput = 0, days = 0;
};
std::vector<CurvePoint> goodput_vs_interval(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint,
                                            const RunWindow& window, double interval_s,
                                            const std::vector<double>& factors, long long seeds);
std::vector<CurvePoint> goodput_vs_size(const ReliabilitySpec& reliability, const CheckpointSpec& checkpoint,
                                        const RunWindow& window, long long gpus, const std::vector<double>& factors,
                                        long long seeds);

} // namespace memwall::model
