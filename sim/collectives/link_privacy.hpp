// Which rounds of a schedule only use private links (speed, issue 17; sim/engine/private_rounds.hpp
// times them without SimGrid messages). A link is private when every message that crosses it is sent
// by one GPU, or received by one GPU, and no round sends two messages over it: a GPU's rounds follow
// one another, and so do its collectives, so such a link never carries two messages at once.
#pragma once

#include "schedule.hpp"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace memwall::collectives {

// The links each (src, dst) route crosses, each named by a number (one per link direction).
using RouteLinks = std::map<std::pair<long long, long long>, std::vector<uint64_t>>;

// Per round of `schedule`: whether every message of it crosses private links only. Every flow's
// (src, dst) must be in `routes`.
std::vector<bool> private_rounds(const Schedule& schedule, const RouteLinks& routes);

} // namespace memwall::collectives
