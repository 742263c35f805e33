// The model catalog: published architectures loaded from YAML (model/models.yaml), looked up by
// name; a scenario's `model: {like: NAME, ...}` starts from one and overrides fields.
#pragma once

#include "architecture.hpp"
#include "input_node.hpp"

#include <string>
#include <vector>

namespace memwall::model {

class ModelCatalog {
public:
  static ModelCatalog load_file(const std::string& path);
  static ModelCatalog from_node(const InputNode& root);
  // The catalog shipped with memwall (path fixed at build time, MEMWALL_MODEL_CATALOG overrides).
  static const std::string& default_path();
  static const ModelCatalog& builtin();

  const std::vector<ArchitectureSpec>& models() const { return models_; }
  const ArchitectureSpec* find(const std::string& name) const;
  std::string names() const; // comma-separated, for error messages

private:
  std::vector<ArchitectureSpec> models_;
};

// Limits on a model's sizes (documented in the README's input limits).
inline constexpr long long kMaxHidden = 1000000;
inline constexpr long long kMaxLayers = 10000;
inline constexpr long long kMaxHeads = 100000;
inline constexpr long long kMaxVocab = 100000000;
inline constexpr long long kMaxExperts = 100000;
inline constexpr long long kMaxSeqLen = 100000000;

// Reads an architecture's fields. With `base`, fields not given keep the base's values. Checks the
// result for consistency (kv_heads divides heads, top_k <= experts, ...), naming the key at fault.
ArchitectureSpec parse_architecture(const InputNode& node, const ArchitectureSpec* base);

} // namespace memwall::model
