// The GPU catalog: GpuSpec entries loaded from YAML (model/gpus.yaml), looked up by name.
#pragma once

#include "gpu_spec.hpp"
#include "input_node.hpp"

#include <string>
#include <vector>

namespace memwall::model {

class GpuCatalog {
public:
  static GpuCatalog load_file(const std::string& path);
  static GpuCatalog from_node(const InputNode& root);
  // The catalog shipped with memwall (path fixed at build time, MEMWALL_GPU_CATALOG overrides).
  static const std::string& default_path();
  static const GpuCatalog& builtin();

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const GpuSpec* find(const std::string& name) const; // by name or display name
  std::string names() const;                          // comma-separated, for error messages
  // The profile a stack names: the one entry of that stack, or a profile named outright; null and
  // `why` set when none or several match.
  const GpuSpec* find_stack(const std::string& stack, std::string& why) const;

private:
  std::vector<GpuSpec> gpus_;
};

// Reads one GPU's fields. With `base` set, fields not given keep the base's values (a scenario's
// inline GPU may say `like: A100-80GB` and override a few fields).
GpuSpec parse_gpu(const InputNode& node, const GpuSpec* base);

} // namespace memwall::model
