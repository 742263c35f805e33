// NCCL's channels over a ring (issue 27). NCCL does not run one ring: it runs C channels, each a
// ring over 1 / C of the data, each entering and leaving a server through other GPUs, so that the
// server crossings of the C rings go through C different NICs. A flat ring across DGX servers thus
// reaches about min(NVLink, NICs per server x NIC) where one ring gets one NIC.
//
// Built here as NCCL builds rail-aligned rings on servers with a NIC per GPU. The ring's order is cut
// into servers (runs of GPUs of one NVLink domain), each run's GPUs taken by local rank. Channel c
// enters server k at local index a_k and leaves it from a_{k+1}, to the GPU of the same local index
// (the same rail) in server k + 1: a_k = o_c + (k mod 2), with a third index for the last server of
// an odd count, o_c = floor(c L / C). Inside a server the channel goes from its entry GPU through
// the others in turn to its exit GPU: down the local indices where the exit is just above the
// entry (even servers), up where it is just below (odd ones), so that every GPU sends to one GPU of
// its server whatever the channel. So every channel crosses on one rail, and with C = L every NIC
// sends one channel's crossing and receives one. Where that cannot be built (servers of unequal
// runs; two GPUs per server and an odd count) channel c turns each run by o_c instead: it enters at
// o_c and leaves from the GPU before it, crossing to the next server's entry GPU. A ring inside one
// server, or with one GPU per server, is the same ring for every channel.
//
// Per GPU the channels' flows to one destination are one flow, with their share of the ring's bytes.
// Channels never change the bytes a GPU sends or receives (tests/sim/test_channels.cpp). Pure data.
#pragma once

#include "schedule.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/fabric_spec.hpp"

#include <vector>

namespace memwall::collectives {

// NCCL allows at most 32 channels per communicator (MAXCHANNELS, NCCL 2.18); 64 leaves room for the
// later, larger limit while catching a typo such as 800.
inline constexpr long long kMaxChannels = 64;

struct RingFlow {
  long long src = 0, dst = 0;
  double share = 0; // of the ring's bytes per GPU: the channels this flow carries over C
};

// The flows of one ring step over `order` (ranks) run as `channels` channels; `places[rank]` as
// places_of_ranks gives them. Senders in `order`'s order, each sender's in-server flow first. With
// one channel, one server or one GPU per server: order[i] -> order[i + 1], share 1, exactly.
std::vector<RingFlow> channel_ring_flows(const std::vector<long long>& order, const std::vector<GpuPlace>& places,
                                         long long channels);

// Each GPU's place, by rank, as the fabric graph records it.
std::vector<GpuPlace> places_of_ranks(const topologies::FabricGraph& graph);

// NCCL's default as memwall models it: one channel per NIC of a server (a cluster with a NIC per GPU:
// its GPUs per server); one where a server has one NIC or the fabric has no servers with NICs.
long long default_channels(const topologies::FabricSpec& fabric);

} // namespace memwall::collectives
