#include "model/server_catalog.hpp"

#include "model/units.hpp"

#include <cstdlib>

#ifndef MEMWALL_DEFAULT_SERVER_CATALOG
#define MEMWALL_DEFAULT_SERVER_CATALOG "model/servers.yaml"
#endif

namespace memwall::model {

namespace {
const char* const kComponents[] = {"cpus", "memory", "nics", "nvswitch", "fans", "storage", "other"};
}

double ServerSpec::host_w() const {
  double sum = 0;
  for (const auto& [component, w] : components_w)
    sum += w;
  return sum;
}

ServerSpec parse_server(const InputNode& node, const ServerSpec* base) {
  node.check_keys({"name", "like", "gpus", "cpus", "memory", "nics", "nvswitch", "fans", "storage", "other",
                   "psu_efficiency", "source"});
  ServerSpec s = base ? *base : ServerSpec{};
  if (!base)
    for (const char* c : kComponents)
      s.components_w.emplace_back(c, 0.0);
  if (auto c = node.optional_child("name"))
    s.name = c->as_string();
  else if (!base)
    node.fail("missing required key 'name'");
  if (auto c = node.optional_child("gpus"))
    s.gpus = c->as_positive_integer();
  for (auto& [component, w] : s.components_w)
    if (auto c = node.optional_child(component))
      w = c->as_non_negative_quantity(Dimension::Power);
  if (auto c = node.optional_child("psu_efficiency"))
    s.psu_efficiency = c->as_fraction(); // (0, 1]: a supply gives out no more than it takes in
  if (auto c = node.optional_child("source"))
    s.source = c->as_string();
  return s;
}

ServerSpec parse_server_reference(const InputNode& node) {
  const ServerCatalog& catalog = ServerCatalog::builtin();
  if (node.is_scalar()) {
    const std::string name = node.as_string();
    if (const ServerSpec* s = catalog.find(name))
      return *s;
    node.fail("unknown server '" + name + "' (known: " + catalog.names() + ")");
  }
  node.require_map();
  const ServerSpec* base = nullptr;
  if (auto like = node.optional_child("like")) {
    base = catalog.find(like->as_string());
    if (!base)
      like->fail("unknown server '" + like->as_string() + "' (known: " + catalog.names() + ")");
  }
  ServerSpec s = parse_server(node, base);
  if (s.name.empty())
    s.name = base ? base->name : "custom";
  return s;
}

ServerCatalog ServerCatalog::load_file(const std::string& path) {
  const InputNode root = InputNode::load_file(path);
  root.check_keys({"servers"});
  ServerCatalog catalog;
  for (const auto& entry : root.child("servers").elements()) {
    entry.require_map();
    if (entry.has("like"))
      entry.fail("'like' is for a scenario's server, not for catalog entries");
    ServerSpec s = parse_server(entry, nullptr);
    if (catalog.find(s.name))
      entry.child("name").fail("duplicate server name '" + s.name + "'");
    catalog.servers_.push_back(std::move(s));
  }
  return catalog;
}

const ServerCatalog& ServerCatalog::builtin() {
  static const ServerCatalog catalog = [] {
    const char* env = std::getenv("MEMWALL_SERVER_CATALOG");
    return load_file(env && *env ? env : MEMWALL_DEFAULT_SERVER_CATALOG);
  }();
  return catalog;
}

const ServerSpec* ServerCatalog::find(const std::string& name) const {
  for (const auto& s : servers_)
    if (s.name == name)
      return &s;
  return nullptr;
}

std::string ServerCatalog::names() const {
  std::string list;
  for (const auto& s : servers_)
    list += (list.empty() ? "" : ", ") + s.name;
  return list;
}

} // namespace memwall::model
