// Helpers shared by memwall's Catch2 tests.
#pragma once

#include "model/gpu_catalog.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace memwall::test {

inline const model::GpuSpec& gpu(const std::string& name) {
  const model::GpuSpec* g = model::GpuCatalog::builtin().find(name);
  REQUIRE(g != nullptr);
  return *g;
}

// Relative closeness: |a - b| <= rel * |b|.
inline Approx rel(double expected, double tolerance = 1e-12) { return Approx(expected).epsilon(tolerance).margin(0); }

} // namespace memwall::test
