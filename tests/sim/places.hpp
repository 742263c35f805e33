// GPU places and rank lists shared by the collective tests.
#pragma once

#include "collectives/schedule.hpp"

#include <vector>

namespace memwall::test {

// Ranks 0..n-1 in servers of `g` GPUs, local rank = rank mod g.
inline std::vector<collectives::GpuPlace> packed(long long n, long long g) {
  std::vector<collectives::GpuPlace> places;
  for (long long r = 0; r < n; ++r)
    places.push_back({r / g, r % g});
  return places;
}

// 0, 1, ..., n - 1.
inline std::vector<long long> iota(long long n) {
  std::vector<long long> ranks;
  for (long long r = 0; r < n; ++r)
    ranks.push_back(r);
  return ranks;
}

} // namespace memwall::test
