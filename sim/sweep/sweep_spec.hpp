// A sweep file: a base scenario plus `sweep:` (dotted scenario keys -> lists of values), full grid by
// default, `zip:` groups of keys that move together. Keys starting with '_' are labels: carried to the
// output, not applied to the scenario.
//
//   base: worked-example/4-ib-64.yaml      # or `scenario:` with the scenario inline
//   sweep:
//     cluster.gpus: [8, 64, 256, 1024]
//     cluster.fabric: [{kind: star, bandwidth: 300GB/s}, {kind: star, bandwidth: 25GB/s}]
//     _fabric: ["NVLink 300 GB/s", "IB HDR 25 GB/s"]
//   zip: [[cluster.fabric, _fabric]]
//   report: {kind: squeeze, b_crit_tokens: 1e6}   # optional: the seed's Table 6 from the results
#pragma once

#include "model/input_node.hpp"

#include <optional>
#include <string>
#include <vector>

namespace memwall::sweep {

inline constexpr long long kMaxSweepPoints = 100000;

struct SweepPoint {
  long long index = 0;                                 // position in the full grid
  std::vector<std::pair<std::string, std::string>> values; // key -> value as compact YAML text
  std::vector<int> value_lines;                        // where each value stands in the sweep file
  std::string scenario_yaml;                           // the base with this point's values applied
};

struct SweepReport {
  std::string kind;           // "" or "squeeze"
  double b_crit_tokens = 1e6; // for squeeze
};

struct SweepSpec {
  std::string file;
  std::optional<model::InputNode> base; // the base scenario (its file, or `scenario:` in the sweep file)
  std::vector<std::string> keys; // swept keys, in file order
  std::vector<SweepPoint> points;
  SweepReport report;
};

SweepSpec load_sweep(const std::string& path);

// A value as one line of flow YAML ("{kind: star, bandwidth: 25GB/s}").
std::string compact_yaml(const YAML::Node& node);
// Sets root[a][b][c] = value for "a.b.c", making the maps on the way.
void assign_dotted(YAML::Node root, const std::string& dotted, const YAML::Node& value);

// `--shard K/M`: the K-th of M slices of a sweep's points (point i is in slice i mod M + 1), so that
// M machines can share a sweep and `memwall merge` joins their results.
struct Shard {
  long long index = 1, count = 1; // K and M, 1-based
  bool has(long long point) const { return point % count == index - 1; }
};
Shard parse_shard(const std::string& text); // InputError (key --shard) unless 1 <= K <= M

// An error found in a point's scenario, located where the user wrote it: the swept value's line in
// the sweep file when the key is swept, else the key's line in the base scenario.
model::InputError locate_in_sweep(const SweepSpec& spec, const SweepPoint& point, const model::InputError& error);

} // namespace memwall::sweep
