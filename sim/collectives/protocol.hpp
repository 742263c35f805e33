// NCCL's three protocols (issue 27), as memwall times them. A protocol trades bandwidth for latency:
// - Simple moves data in large chunks and synchronises each step with a flag after a memory fence:
//   full bandwidth, the longest step latency.
// - LL128 sends 128-byte lines of which 120 bytes are data and 8 a flag (NCCL src/include/device.h,
//   NCCL_LL128_LINEELEMS / DATAELEMS): NCCL's tuner counts 0.92 of the link's bandwidth.
// - LL sends 8-byte lines, 4 bytes of data and a 4-byte flag (NCCL src/device/primitives.h, "Half
//   is data"): half the bandwidth on a ring, the shortest step latency.
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
  // Link time per byte of data, in bytes at the link's rate, for rings and for trees: the inverse
  // of the bandwidth fraction NCCL's tuner gives the protocol (tuning.cc, "model refinements"):
  // ring LL 0.5 (the flags), LL128 0.92, Simple 1; tree 0.92 with Simple, 0.92 / 3.8 with LL,
  // 0.92 x 120/128 with LL128.
  double ring_wire_bytes_per_byte, tree_wire_bytes_per_byte;
  double ring_base_s, tree_base_s;             // per call
  double ring_nvlink_step_s, ring_net_step_s;  // per ring step, by the hop's kind
  double tree_nvlink_step_s, tree_net_step_s;  // per tree level, by the hop's kind
};

const ProtocolFigures& protocol_figures(Protocol protocol);

// NVLink SHARP (NVLS) inside one NVLink domain: NCCL's tuner gives it no base latency and one
// hwLat[NVLINK][NVLS][Simple] of 25 us per call, not per step (tuning.cc at 5067397c), and runs it
// with Simple only. So NVLS loses to the LL ring on small calls and wins on large ones.
inline constexpr double kNvlsCallLatency_s = 25e-6;
// "simple", "ll128" or "ll"; throws std::invalid_argument otherwise.
Protocol parse_protocol(const std::string& name);
inline constexpr const char* kProtocolNames = "simple, ll128, ll, auto";
std::vector<Protocol> all_protocols();

} // namespace memwall::collectives
