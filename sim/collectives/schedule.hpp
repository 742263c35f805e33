// All-reduce algorithms as schedules of rounds. Within a round every listed flow runs at once and
// each GPU waits for all the flows it sends and receives; rounds follow one another per GPU. A round
// may stand for several sequential algorithm steps aggregated into one message per flow (a ring
// phase): `extra_latency_steps` says how many more route latencies those steps would have paid.
// Pure data, no SimGrid: sim/collectives/collective_runner executes schedules, estimate.hpp costs them.
#pragma once

#include <string>
#include <vector>

namespace memwall::collectives {

struct Flow {
  long long src = 0, dst = 0;
  double bytes = 0;
};

struct Round {
  std::string name;
  std::vector<Flow> flows;
  double extra_latency_steps = 0;
};

// Where a GPU sits: its server (NVLink domain; negative: a domain of its own) and its local rank.
struct GpuPlace {
  long long server = -1, local = 0;
};

struct Schedule {
  std::string algorithm;
  std::vector<Round> rounds;
};

// Ring reduce-scatter + all-gather over `order` (a permutation of the ranks): 2 rounds. With
// `channels` > 1 and `places` (each rank's server and local rank), NCCL's channels (channels.hpp):
// the same bytes per GPU, split over the channels' rings.
Schedule ring_schedule(const std::vector<long long>& order, double bytes, const std::vector<GpuPlace>& places = {},
                       long long channels = 1);
// Intra-server ring reduce-scatter, inter-server ring all-reduce per rail (GPUs of equal local
// rank), intra-server all-gather. Ranks are node * G + local.
Schedule hierarchical_schedule(long long gpus, long long gpus_per_node, double bytes);
// NCCL-style double binary tree: two trees (heap order over ranks, and over reversed ranks), each
// reducing then broadcasting half of the data, pipelined: a reduce round and a broadcast round.
Schedule double_tree_schedule(long long gpus, double bytes);
// NCCL's tree on servers (places: each rank's server and local rank; every server the same size,
// more than one GPU): inside a server a chain by local rank, across servers a double binary tree
// over the servers (heap order, and reversed), each tree with half the data and its own chain
// direction, so that the two trees leave a server from different GPUs (the chain's two ends). Four
// rounds: chain reduce, tree reduce, tree broadcast, chain broadcast; within each the steps are
// pipelined, the phases follow one another (a small call's latency is NCCL's:
// 2 ((G - 1) NVLink steps + depth network steps)). With C channels, as NCCL builds trees per
// channel: channel c's chains start at local c G / C, so that the channels' trees leave a server
// from different GPUs (their NICs), each over 1/C of the data. Falls back to double_tree_schedule
// where the ranks have no servers (a star, a torus) or one GPU each.
Schedule nccl_tree_schedule(const std::vector<GpuPlace>& places, double bytes, long long channels = 1);
// NVLink SHARP all-reduce (NCCL's NVLS) inside one NVLink domain whose NVSwitches reduce. Each GPU
// reads the sum of its 1 / n of the data from the switch (multimem.ld_reduce: the switch pulls that
// shard from all n GPUs, so every GPU's link carries S out), then writes it back once and the switch
// multicasts it to all n (multimem.st: S / n out, S in). Per GPU and direction that is S (n + 1) / n
// on its one NVLink port to the switches, against the ring's 2 (n - 1) / n S: the bus bandwidth can
// pass the link's, by 2 (n - 1) / (n + 1) at equal rates (1.56 for 8 GPUs). NVLS reaches
// `efficiency` of NVLink's data rate (NCCL's nvlsEfficiency), counted as 1 / efficiency wire bytes
// per byte, as a protocol's flags are. Flows run GPU r -> GPU r + 1 through the switch: on a
// non-blocking switch they load each GPU's two directions exactly as the switch's reads and
// multicasts do. One round; throws std::invalid_argument unless every place is in one server.
Schedule nvls_schedule(const std::vector<GpuPlace>& places, double bytes, double efficiency);
// Recursive halving reduce-scatter then recursive doubling all-gather, nearest partner first
// (partner r xor 2^k carries bytes / 2^(k+1)). Needs a power-of-two N.
Schedule halving_doubling_schedule(long long gpus, double bytes);

bool is_power_of_two(long long n);
long long tree_depth(long long gpus); // levels below the root of a heap-ordered binary tree

} // namespace memwall::collectives
