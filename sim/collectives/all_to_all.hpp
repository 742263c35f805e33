// All-to-all as NCCL runs it (issue 27 point 3; issue 34: wide expert parallelism fast). Pure data.
//
// NCCL runs an all-to-all as every pair's point-to-point message at once. On servers whose GPUs each
// have a NIC (rails), PXN sends a message to GPU (t, j) of another server through the NIC of the
// sender's server-mate of local rank j: an NVLink hop to that relay, then the relay's rail to (t, j),
// so every message crosses the network on its destination's rail. The relay must be a rank of the
// same communicator (NCCL's proxy shares its buffers); the relay forwards while it receives, so both
// hops run at once. Messages between the same two GPUs travel as one flow.
//
// Stand-ins (speed): E (E - 1) flows at once put every flow of a step into one max-min sharing
// component, and SimGrid's solver then dominates the run (80% at EP 64). The stand-ins are at most
// two flows per GPU that load every link exactly as the flows above do: each GPU's bytes to its
// server-mates as one flow to the next GPU of the communicator in its server, its bytes to other
// servers as one flow to the GPU of its local rank in the next server. Whether they also take the
// same time is a property of the fabric; sim/parallel/expert_exchange.hpp checks it.
#pragma once

#include "schedule.hpp"
#include "topologies/fabric_spec.hpp"

#include <vector>

namespace memwall::collectives {

// Whether NCCL's PXN applies on `fabric`: servers of several GPUs, each GPU with its own NIC.
bool pxn_applies(const topologies::FabricSpec& fabric);

// The flows of one all-to-all among `ranks` (one communicator), each rank sending `unit` bytes to
// each other one; with PXN where `pxn` (servers with a NIC per GPU). Sorted by (src, dst).
std::vector<Flow> all_to_all_flows(const std::vector<long long>& ranks, const std::vector<GpuPlace>& places,
                                   bool pxn, double unit);

// The stand-ins of `flows` (as above) among the GPUs of `ranks`; empty when they cannot be built
// (a GPU whose next server holds no GPU of the communicator at its local rank).
std::vector<Flow> all_to_all_stand_ins(const std::vector<Flow>& flows, const std::vector<long long>& ranks,
                                       const std::vector<GpuPlace>& places);

} // namespace memwall::collectives
