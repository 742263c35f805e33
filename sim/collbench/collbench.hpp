// `memwall collbench`: nccl-tests, simulated (issue 27). One collective of each size in turn over a
// fabric's GPUs, each call timed from a common start (a barrier) to the last GPU's end, with
// nccl-tests' columns: algbw = size / time, busbw = algbw x the operation's bus factor (nccl-tests
// doc/PERFORMANCE.md). Each size's algorithm and protocol are the given ones or, with `auto`, the
// pair a tuner's estimate finds fastest (as NCCL's tuner picks), then simulated.
#pragma once

#include "collectives/protocol.hpp"
#include "topologies/fabric_spec.hpp"

#include <string>
#include <vector>

namespace memwall::collbench {

enum class Op { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };
inline constexpr const char* kOpNames = "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv";
// Throws std::invalid_argument for an unknown name.
Op parse_op(const std::string& name);
const char* op_name(Op op);
// nccl-tests' busbw / algbw: 2(n-1)/n for all-reduce; (n-1)/n for all-gather, reduce-scatter and
// all-to-all; 1 for broadcast and send/recv.
double bus_factor(Op op, long long gpus);

// All-to-all sends n(n-1) messages per call, each a SimGrid communication: bounded so that a call
// stays within seconds.
inline constexpr long long kMaxAllToAllGpus = 1024;
inline constexpr double kMaxSizeBytes = 64.0 * 1073741824.0; // 64 GiB, as nccl-tests on one GPU

struct CollbenchSpec {
  topologies::FabricSpec fabric;
  std::string fabric_label; // as the user named it
  long long gpus = 0;
  Op op = Op::AllReduce;
  std::string algorithm = "auto"; // ring, hierarchical, tree, halving-doubling or auto (all_reduce)
  std::string protocol = "auto";  // simple, ll128, ll or auto
  long long channels = 0;         // 0: the fabric's default (collectives/channels.hpp)
  std::vector<double> sizes_bytes;
};

struct CollbenchRow {
  double size_bytes = 0;
  long long count = 0; // float elements, as nccl-tests' count column
  double time_s = 0;
  double algbw_bytes_per_s = 0, busbw_bytes_per_s = 0;
  std::string algorithm, protocol;
  double estimate_s = 0; // the tuner's estimate for the pair it chose
};

struct CollbenchResult {
  std::vector<CollbenchRow> rows;
  long long channels = 1;
  double bytes_sent = 0, bytes_received = 0; // over all calls, on the wire
  double sim_wall_s = 0;
};

// Sizes from `from` to `to` (bytes), multiplied by `factor` (> 1) each time, `to` included when it
// falls on the sequence, as nccl-tests -b -e -f.
std::vector<double> size_range(double from, double to, double factor);

// Runs the whole benchmark in this process's SimGrid engine (one per process). Throws
// std::invalid_argument for a combination that cannot run (an algorithm the op does not have).
CollbenchResult run_collbench(const CollbenchSpec& spec);

} // namespace memwall::collbench
