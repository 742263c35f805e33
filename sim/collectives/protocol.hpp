// NCCL's three protocols (issue 27), as memwall times them. A protocol trades bandwidth for latency:
// - Simple moves data in large chunks and synchronises each step with a flag after a memory fence:
//   full bandwidth, the longest step latency.
// - LL128 sends 128-byte lines of which 120 bytes are data and 8 a flag (NCCL src/include/device.h,
//   NCCL_LL128_LINEELEMS / DATAELEMS): every data byte puts 128 / 120 bytes on the wire.
// - LL sends 8-byte lines, 4 bytes of data and a 4-byte flag (NCCL src/device/primitives.h, "Half
//   is data"): twice the bytes on the wire, the shortest step latency.
// Latencies are NCCL's own tuning tables (src/graph/tuning.cc at commit 5067397c, NCCL 2.30.7):
// a base latency per call (baseLat) and a latency per algorithm step by the kind of hop the step
// takes (hwLat: NVLink inside a server, NET between servers), for rings and for trees. They stand
// for the protocol's synchronisation and the hop's flight together, so a collective timed with a
// protocol pays them instead of the fabric links' own latency (see docs/reference.md, Collectives).
// Pure data, no SimGrid.
#pragma once

#include <string>
#include <vector>

namespace memwall::collectives {

enum class Protocol { Simple, LL128, LL };

struct ProtocolFigures {
  const char* name;
  double wire_bytes_per_byte; // bytes on the wire per byte of data
  double ring_base_s, tree_base_s;             // per call
  double ring_nvlink_step_s, ring_net_step_s;  // per ring step, by the hop's kind
  double tree_nvlink_step_s, tree_net_step_s;  // per tree level, by the hop's kind
};

const ProtocolFigures& protocol_figures(Protocol protocol);
// "simple", "ll128" or "ll"; throws std::invalid_argument otherwise.
Protocol parse_protocol(const std::string& name);
inline constexpr const char* kProtocolNames = "simple, ll128, ll, auto";
std::vector<Protocol> all_protocols();

} // namespace memwall::collectives
