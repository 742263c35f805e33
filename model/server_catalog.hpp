// The server catalog (model/servers.yaml): what a server draws beyond its GPUs, by component, and
// its power supplies' efficiency. A scenario's `power: {server: NAME}` or `{server: {like: NAME,
// fans: 0W}}` turns it into the host power per fabric node (model/facility_power.hpp).
#pragma once

#include "input_node.hpp"

#include <string>
#include <utility>
#include <vector>

namespace memwall::model {

struct ServerSpec {
  std::string name;
  long long gpus = 8; // GPUs per server: the figures below are for this many
  // (component, watts DC while training), in the catalog's order: cpus, memory, nics, nvswitch,
  // fans, storage, other.
  std::vector<std::pair<std::string, double>> components_w;
  double psu_efficiency = 1; // DC out over AC in
  std::string source;
  double host_w() const; // the components' sum, DC
};

class ServerCatalog {
public:
  static ServerCatalog load_file(const std::string& path);
  // The catalog shipped with memwall (path fixed at build time, MEMWALL_SERVER_CATALOG overrides).
  static const ServerCatalog& builtin();
  const std::vector<ServerSpec>& servers() const { return servers_; }
  const ServerSpec* find(const std::string& name) const;
  std::string names() const;

private:
  std::vector<ServerSpec> servers_;
};

// One server's fields; with `base` set, fields not given keep the base's (a scenario's `like:`).
ServerSpec parse_server(const InputNode& node, const ServerSpec* base);
// A scenario's `server:` value: a catalog name, or an inline entry (with `like:`).
ServerSpec parse_server_reference(const InputNode& node);

} // namespace memwall::model
