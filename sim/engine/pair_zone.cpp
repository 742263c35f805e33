#include "sim/engine/pair_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace memwall::sim {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace {

unsigned long long pair_key(const NetPoint* src, const NetPoint* dst) {
  return (static_cast<unsigned long long>(src->id()) << 32) | static_cast<unsigned long long>(dst->id());
}

// The directional link a route takes: a split-duplex link's half, or the link itself.
const sg4::Link* way_of(const sg4::LinkInRoute& hop, bool backwards) {
  const auto* duplex = dynamic_cast<const sg4::SplitDuplexLink*>(hop.get_link());
  if (!duplex)
    return hop.get_link();
  const bool up = (hop.get_direction() == sg4::LinkInRoute::Direction::UP) != backwards;
  return up ? duplex->get_link_up() : duplex->get_link_down();
}

} // namespace

PairZone* PairZone::create(const std::string& name) {
  return new PairZone(name); // NOLINT: owned by SimGrid's engine, as its own zones are
}

void PairZone::store(const NetPoint* src, const NetPoint* dst, const std::vector<sg4::LinkInRoute>& link_list,
                     bool backwards) {
  Stored route;
  route.links = get_link_list_impl(link_list, backwards);
  if (backwards) // get_link_list_impl flips each hop's direction; the order is ours to reverse
    std::reverse(route.links.begin(), route.links.end());
  for (const sg4::LinkInRoute& hop : link_list)
    route.latency_s += way_of(hop, backwards)->get_latency();
  routes_[pair_key(src, dst)] = std::move(route);
}

void PairZone::add_route(NetPoint* src, NetPoint* dst, NetPoint* gw_src, NetPoint* gw_dst,
                         const std::vector<sg4::LinkInRoute>& link_list, bool symmetrical) {
  if (gw_src || gw_dst || src->is_netzone() || dst->is_netzone())
    throw std::logic_error("PairZone '" + get_name() + "' routes between its hosts only");
  store(src, dst, link_list, false);
  if (symmetrical)
    store(dst, src, link_list, true);
}

void PairZone::get_local_route(const NetPoint* src, const NetPoint* dst, simgrid::kernel::routing::Route* into,
                               double* latency) {
  const auto hit = routes_.find(pair_key(src, dst));
  if (hit == routes_.end())
    throw std::logic_error("no route from " + src->get_name() + " to " + dst->get_name() + " in zone '" +
                           get_name() + "': only the pairs asked for have one");
  into->link_list_.insert(into->link_list_.end(), hit->second.links.begin(), hit->second.links.end());
  if (latency)
    *latency += hit->second.latency_s;
}

} // namespace memwall::sim
