#include "gpu_catalog.hpp"

#include <cstdio>
#include <cstdlib>

#ifndef MEMWALL_DEFAULT_GPU_CATALOG
#define MEMWALL_DEFAULT_GPU_CATALOG "model/gpus.yaml"
#endif

namespace memwall::model {

namespace {
std::string format_watts(double w) {
  char text[32];
  std::snprintf(text, sizeof text, "%g W", w);
  return text;
}
} // namespace

GpuSpec parse_gpu(const InputNode& node, const GpuSpec* base) {
  node.check_keys({"name", "display_name", "like", "peak", "hbm_bandwidth", "l2", "hbm_capacity", "e_hbm",
                   "e_flop", "e_dp", "p_static", "tdp", "nvlink", "ib", "gemm_efficiency",
                   "attention_efficiency", "hbm_efficiency", "peak_fp8", "fp8_gemm_efficiency", "power_limit", "dvfs", "source",
                   "power_model", "p_clocked", "p_active", "stack", "sms", "gemm_tile"});
  GpuSpec g = base ? *base : GpuSpec{};
  if (base)
    g.source = "based on " + base->name;
  auto read = [&](const char* key, Dimension dim, double& field, bool allow_zero = false) {
    if (auto c = node.optional_child(key))
      field = allow_zero ? c->as_non_negative_quantity(dim) : c->as_positive_quantity(dim);
    else if (!base)
      node.fail(std::string("missing required key '") + key + "'");
  };
  if (auto c = node.optional_child("name"))
    g.name = c->as_string();
  else if (!base)
    node.fail("missing required key 'name'");
  g.display_name = node.has("display_name") ? node.child("display_name").as_string() : g.name;
  read("peak", Dimension::FlopRate, g.peak_flops_per_s);
  if (auto c = node.optional_child("peak_fp8"))
    g.peak_fp8_flops_per_s = c->as_positive_quantity(Dimension::FlopRate);
  read("hbm_bandwidth", Dimension::Bandwidth, g.hbm_bytes_per_s);
  read("l2", Dimension::Bytes, g.l2_bytes);
  read("hbm_capacity", Dimension::Bytes, g.hbm_capacity_bytes);
  read("e_hbm", Dimension::Energy, g.e_hbm_j_per_byte);
  read("e_flop", Dimension::Energy, g.e_flop_j_per_flop);
  read("e_dp", Dimension::Energy, g.e_dp_j_per_flop);
  read("p_static", Dimension::Power, g.p_static_w, true);
  read("tdp", Dimension::Power, g.tdp_w);
  if (auto c = node.optional_child("power_model")) {
    const std::string word = c->as_string();
    if (word == "per_flop")
      g.power_model = PowerModel::PerFlop;
    else if (word == "activity")
      g.power_model = PowerModel::Activity;
    else
      c->fail("power_model must be per_flop (the seed's energies per FLOP and byte) or activity (clocked "
              "and busy power as a meter reads it), not '" + word + "'");
  }
  if (auto c = node.optional_child("p_clocked"))
    g.p_clocked_w = c->as_non_negative_quantity(Dimension::Power);
  if (auto c = node.optional_child("p_active"))
    g.p_active_w = c->as_non_negative_quantity(Dimension::Power);
  if (g.power_model == PowerModel::Activity && g.p_clocked_w + g.p_active_w <= 0)
    node.fail("power_model: activity needs p_clocked and p_active (watts above static power while the GPU "
              "waits clocked, and while all its SMs run a kernel)");
  read("nvlink", Dimension::Bandwidth, g.nvlink_bytes_per_s);
  read("ib", Dimension::Bandwidth, g.ib_bytes_per_s);
  if (auto c = node.optional_child("sms"))
    g.sms = c->as_positive_integer();
  parse_efficiencies(node, g);
  if (g.gemm_tile.on() && g.sms <= 0)
    node.child("gemm_tile").fail("gemm_tile (tile and wave quantization) needs the GPU's SM count: add sms");
  if (auto c = node.optional_child("source"))
    g.source = c->as_string();
  if (auto c = node.optional_child("stack"))
    g.stack = c->as_string();
  if (g.p_static_w > g.tdp_w)
    node.fail("p_static (" + std::to_string(g.p_static_w) + " W) exceeds tdp (" + std::to_string(g.tdp_w) +
              " W)");
  if (awake_power_w(g) > g.tdp_w)
    node.fail("p_static + p_clocked (" + format_watts(awake_power_w(g)) + ", a GPU waiting in a job) exceeds tdp (" +
              format_watts(g.tdp_w) + ")");
  if (auto c = node.optional_child("dvfs")) {
    c->check_keys({"max_clock_mhz", "min_clock", "min_voltage", "source"});
    if (auto v = c->optional_child("max_clock_mhz"))
      g.dvfs.max_clock_mhz = v->as_positive_number();
    if (auto v = c->optional_child("min_clock"))
      g.dvfs.min_clock = v->as_fraction();
    if (auto v = c->optional_child("min_voltage"))
      g.dvfs.min_voltage = v->as_fraction();
    if (auto v = c->optional_child("source"))
      g.dvfs.source = v->as_string();
    if (g.dvfs.min_clock >= 1.0)
      c->child("min_clock").fail("min_clock must be below 1 (a fraction of the maximum clock)");
  }
  if (auto c = node.optional_child("power_limit")) {
    // `tdp`: the board power; `none`: no cap (the seed's behaviour, and the default); or watts.
    const std::string word = c->is_scalar() ? c->as_string() : "";
    if (word == "none")
      g.power_limit_w = 0;
    else if (word == "tdp")
      g.power_limit_w = g.tdp_w;
    else
      g.power_limit_w = c->as_positive_quantity(Dimension::Power);
    // At or below static power no clock could meet the limit: every phase would draw more.
    if (word != "none" && g.power_limit_w <= awake_power_w(g))
      c->fail("power_limit (" + format_watts(g.power_limit_w) + ") must be above the GPU's idle power in a job (" +
              format_watts(awake_power_w(g)) + (g.power_model == PowerModel::Activity ? ", static + clocked" : ", static") +
              "): no clock can meet it");
  }
  return g;
}

GpuCatalog GpuCatalog::load_file(const std::string& path) {
  return from_node(InputNode::load_file(path));
}

GpuCatalog GpuCatalog::from_node(const InputNode& root) {
  root.check_keys({"gpus"});
  GpuCatalog catalog;
  for (const auto& entry : root.child("gpus").elements()) {
    entry.require_map();
    if (entry.has("like"))
      entry.fail("'like' is for a scenario's inline GPU, not for catalog entries");
    GpuSpec g = parse_gpu(entry, nullptr);
    if (catalog.find(g.name))
      entry.child("name").fail("duplicate GPU name '" + g.name + "'");
    catalog.gpus_.push_back(std::move(g));
  }
  if (catalog.gpus_.empty())
    root.child("gpus").fail("the catalog lists no GPU");
  return catalog;
}

const std::string& GpuCatalog::default_path() {
  static const std::string path = [] {
    const char* env = std::getenv("MEMWALL_GPU_CATALOG");
    return std::string(env && *env ? env : MEMWALL_DEFAULT_GPU_CATALOG);
  }();
  return path;
}

const GpuSpec* GpuCatalog::find_stack(const std::string& stack, std::string& why) const {
  std::vector<const GpuSpec*> of_stack;
  std::string stacks;
  for (const auto& g : gpus_) {
    if (g.stack.empty())
      continue;
    if (g.name == stack)
      return &g;
    if (g.stack == stack)
      of_stack.push_back(&g);
    stacks += (stacks.empty() ? "" : ", ") + g.stack + " (" + g.name + ")";
  }
  if (of_stack.size() == 1)
    return of_stack.front();
  if (of_stack.empty())
    why = "no calibrated profile of stack '" + stack + "' (the catalog has: " + stacks + ")";
  else {
    why = "stack '" + stack + "' has several profiles; name one:";
    for (const auto* g : of_stack)
      why += " " + g->name;
  }
  return nullptr;
}

const GpuCatalog& GpuCatalog::builtin() {
  static const GpuCatalog catalog = load_file(default_path());
  return catalog;
}

const GpuSpec* GpuCatalog::find(const std::string& name) const {
  for (const auto& g : gpus_)
    if (g.name == name || g.display_name == name)
      return &g;
  return nullptr;
}

std::string GpuCatalog::names() const {
  std::string list;
  for (const auto& g : gpus_)
    list += (list.empty() ? "" : ", ") + g.name;
  return list;
}

} // namespace memwall::model
