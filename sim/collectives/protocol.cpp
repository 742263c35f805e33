#include "protocol.hpp"

#include <stdexcept>

namespace memwall::collectives {

namespace {

constexpr double kUs = 1e-6;

// NCCL src/graph/tuning.cc (commit 5067397c): baseLat[algorithm][protocol] and
// hwLat[NVLINK | NET][algorithm][protocol], in microseconds; protocol order LL, LL128, Simple. Wire
// bytes per data byte: the inverse of the tuner's bandwidth refinements (ring LL x 0.5, LL128 x 0.92;
// tree x 0.92, then LL x 1/3.8, LL128 x 120/128 across servers).
const ProtocolFigures kSimple{"simple", 1.0, 1.0 / 0.92, 8.4 * kUs, 8.4 * kUs, 3.4 * kUs, 14.0 * kUs, 4.0 * kUs,
                              14.0 * kUs};
const ProtocolFigures kLl128{"ll128",    1.0 / 0.92, 128.0 / 120.0 / 0.92, 14.0 * kUs, 14.0 * kUs, 1.9 * kUs,
                             4.0 * kUs, 1.25 * kUs, 8.5 * kUs};
const ProtocolFigures kLl{"ll", 2.0, 3.8 / 0.92, 6.6 * kUs, 6.8 * kUs, 0.6 * kUs, 2.7 * kUs, 0.6 * kUs, 5.0 * kUs};

} // namespace

const ProtocolFigures& protocol_figures(Protocol protocol) {
  switch (protocol) {
  case Protocol::LL:
    return kLl;
  case Protocol::LL128:
    return kLl128;
  default:
    return kSimple;
  }
}

Protocol parse_protocol(const std::string& name) {
  for (Protocol p : all_protocols())
    if (name == protocol_figures(p).name)
      return p;
  throw std::invalid_argument("unknown protocol '" + name + "' (expected " + kProtocolNames + ")");
}

std::vector<Protocol> all_protocols() { return {Protocol::Simple, Protocol::LL128, Protocol::LL}; }

} // namespace memwall::collectives
