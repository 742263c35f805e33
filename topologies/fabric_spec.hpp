// A fabric as the user describes it (scenario `cluster.fabric`, inline or a fabric file).
#pragma once

#include <map>
#include <string>

namespace memwall::topologies {

struct LinkOverride {
  double bytes_per_s = 0; // 0: keep the fabric's
  double latency_s = -1;  // < 0: keep the fabric's
};

struct FabricSpec {
  std::string kind = "star";     // star: each GPU has one full-duplex link to a non-blocking switch
  double link_bytes_per_s = 0;   // per direction
  double link_latency_s = 0;     // per link, per direction
  double pj_per_bit = 0;         // network energy per bit per link crossed
  std::map<long long, LinkOverride> gpu_links; // per-GPU link overrides (rank -> figures)
  std::string file;              // where it was described, for messages
  int line = 0;
};

} // namespace memwall::topologies
