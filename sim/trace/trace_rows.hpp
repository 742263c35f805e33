// The rows of a memwall trace: simulated phases, messages and links. Plain structs laid out for HDF5
// compound types (sim/trace/hdf5_trace_writer) and the Perfetto timeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memwall::trace {

// Phase names in traces. Layer level uses the four per-layer kinds; coarser levels aggregate them.
enum class TracePhase : uint8_t {
  FwdGemm = 0,
  FwdElementwise,
  BwdGemm,
  BwdElementwise,
  AllReduce,
  Optimizer,
  Forward,  // micro-batch level: all forward phases of a micro-batch
  Backward, // micro-batch level
  Compute,  // step level: all forward and backward phases of a step
  Wait,     // idle until the slowest GPU finishes the run
  AllGather,     // ZeRO-3 / FSDP parameter gathers, ZeRO-2 parameter shards back
  ReduceScatter, // ZeRO-2/3 gradient reduce-scatter
  TensorComm,    // a layer's tensor-parallel collectives (on the critical path)
  PipelineWait,  // a pipeline stage waiting for its neighbour's activations or gradients (the bubble)
  PipelineSend,  // activations or gradients to the neighbouring stage (communication stream)
  ExpertComm,    // an MoE layer's all-to-all dispatch and combine over its expert-parallel group
  ContextComm,   // a layer's key/value ring exchange (context parallelism) not hidden by its compute
};
inline constexpr int kTracePhases = 17;

// Which timeline of a GPU a phase row is on. The compute stream's rows tile [0, makespan] and carry
// the GPU's static energy (a wait for a collective there is exposed communication); with overlap,
// the communication stream's rows run beside them and carry only network energy, so no joule is
// counted twice.
enum class TraceStream : uint8_t { Compute = 0, Communication = 1 };
const char* trace_phase_name(TracePhase phase);

enum class TraceLevel { Step, Microbatch, Layer, Message };
// "step" | "microbatch" | "layer" | "message"; throws std::invalid_argument otherwise.
TraceLevel parse_trace_level(const std::string& text);
const char* trace_level_name(TraceLevel level);

struct PhaseRow {
  int32_t gpu = 0;
  int32_t step = 0;
  int32_t microbatch = -1; // -1: not within a micro-batch (all-reduce, optimizer, wait, step level)
  int32_t layer = -1;      // -1: not a single layer
  TracePhase phase = TracePhase::FwdGemm;
  TraceStream stream = TraceStream::Compute;
  double t_start_s = 0;
  double t_end_s = 0;
  double flops = 0;
  double hbm_bytes = 0;
  double e_arith_j = 0;
  double e_hbm_j = 0;
  double e_static_j = 0;
  double e_network_j = 0;
  double clock = 1; // compute phases: the core clock they ran at, a fraction of the maximum (power cap)
  int32_t job = 0;  // the job (a jobs file's, in file order; 0 for a scenario); `gpu` is its rank in it
};

// A GPU's power over one interval of the compute stream: its phase's joules (arithmetic, HBM, static)
// over its duration. Network energy is the links', not the GPU's.
struct PowerRow {
  int32_t gpu = 0;
  double t_start_s = 0;
  double t_end_s = 0;
  double power_w = 0;
  double clock = 1;
  int32_t job = 0;
};

// A server's (or the whole job's) power over one interval: its GPUs' power rows summed, plus what it
// draws beyond them (host, NICs), over its power supplies' efficiency: as a meter at its feed reads it.
struct ServerPowerRow {
  int32_t server = 0; // GPUs [server x gpus_per_server, ...); -1 for the whole job
  double t_start_s = 0;
  double t_end_s = 0;
  double power_w = 0;
  int32_t job = 0;
};

// The power of each server (whole_job false) or of the whole job (true) as a step function: one row
// per interval between two instants where any of its GPUs' power changes. base_w: a server's power
// beyond its GPUs; psu_efficiency divides the sum.
std::vector<ServerPowerRow> server_power_rows(const std::vector<PowerRow>& power, long long gpus_per_server,
                                              long long servers, double base_w, double psu_efficiency,
                                              bool whole_job);

// One event of a whole run's timeline with failures (model/goodput.hpp), for the trace's /run group.
struct RunEventRow {
  char event[16];   // checkpoint, written, failure, reroute, resumed, end
  char failure[32]; // the failure's kind, or empty
  double t_s = 0;
  double steps_kept = 0; // the last written checkpoint's steps (end: the steps trained)
  double lost_s = 0;     // a failure's training time lost since that checkpoint
};

// The GPUs' power over time, from the compute stream's phase rows (one row each, in their order).
std::vector<PowerRow> power_rows(const std::vector<PhaseRow>& phases);

struct CommRow {
  int32_t src_gpu = 0;
  int32_t dst_gpu = 0;
  double bytes = 0;
  double t_start_s = 0;
  double t_end_s = 0;
  int64_t collective_id = 0; // one id per collective call (RunRecorder::collective_id), the same on all its messages
  TracePhase kind = TracePhase::AllReduce; // allreduce, reducescatter, allgather, tp_comm, cp_comm, ep_comm, pp_send
  int32_t job = 0;
};

struct LinkRow {
  std::string name;
  std::string kind;
  double bandwidth_bytes_per_s = 0;
  double bytes_carried = 0;
  double busy_s = 0; // union of the intervals during which messages crossed it
  double e_network_j = 0;
  int32_t job = 0; // whose messages (one row per job that used the link)
};

} // namespace memwall::trace
