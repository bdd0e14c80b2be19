#include "conn/user_selection.h"

#include <fmt/core.h>

#include <algorithm>

#include "conn/device_choice.h"

namespace rdmacheck::conn {
namespace {

// What CHOICE selects, as the endpoint would choose it; nullopt when it
// selects nothing usable (no such device, an empty GID slot).
std::optional<Selection> select(const std::vector<DeviceInfo>& devices, const DeviceChoice& choice,
                                const std::string& local_address) {
  auto dp = choose_device_port(device_candidates(devices), choice);
  if (!dp) return std::nullopt;
  auto d = std::find_if(devices.begin(), devices.end(),
                        [&](const DeviceInfo& i) { return i.name == dp->device; });
  if (d == devices.end()) return std::nullopt;
  auto p = std::find_if(d->ports.begin(), d->ports.end(),
                        [&](const PortInfo& i) { return i.port == dp->port; });
  if (p == d->ports.end()) return std::nullopt;
  auto g = choose_gid(gid_candidates(*p), p->ethernet(), choice.gid_index, local_address,
                      fmt::format("{} port {}", d->name, p->port));
  if (!g) return std::nullopt;
  auto e = std::find_if(p->gids.begin(), p->gids.end(),
                        [&](const GidEntry& i) { return i.index == g->index; });
  if (e == p->gids.end()) return std::nullopt;
  return Selection{.device = d->name,
                   .port = p->port,
                   .port_state = p->port_state(),
                   .gid_index = e->index,
                   .gid = e->gid,
                   .gid_type = e->type,
                   .netdev = e->netdev.empty() ? p->netdev : e->netdev};
}

}  // namespace

UserSelection user_selection(const std::vector<DeviceInfo>& devices, const DeviceChoice& forced,
                             const std::string& local_address) {
  UserSelection u;
  u.device = !forced.device.empty();
  u.port = forced.ib_port > 0;
  u.gid = forced.gid_index >= 0;
  u.local_address = local_address;
  if (!u.any()) return u;
  u.forced = select(devices, forced, local_address);
  u.automatic = select(devices, DeviceChoice{}, local_address);
  return u;
}

CmHost cm_host(const FsRoot& fs, const std::vector<DeviceInfo>& devices, const std::string& source,
               bool forced, const std::string& route_source) {
  CmHost h;
  h.used = true;
  h.dev_node = fs.exists("/dev/infiniband/rdma_cm");
  h.ucm_loaded = fs.exists("/sys/module/rdma_ucm");
  h.cm_loaded = fs.exists("/sys/module/rdma_cm");
  h.source = source;
  h.forced_source = forced;
  h.route_source = route_source;
  const std::string want = address_gid_text(source);
  if (want.empty()) return h;
  h.source_rdma = false;
  for (const auto& d : devices) {
    for (const auto& p : d.ports) {
      for (const auto& g : p.gids) {
        if (g.gid != want || h.source_rdma) continue;
        h.source_rdma = true;
        h.source_at = Selection{.device = d.name,
                                .port = p.port,
                                .port_state = p.port_state(),
                                .gid_index = g.index,
                                .gid = g.gid,
                                .gid_type = g.type,
                                .netdev = g.netdev.empty() ? p.netdev : g.netdev};
      }
    }
  }
  if (forced && !route_source.empty()) h.route_at = select(devices, DeviceChoice{}, route_source);
  return h;
}

void observe_choices(ConnObservation& obs, const Target& t, bool cm,
                     const std::string& local_address) {
  const DeviceChoice& forced = t.dev;
  const bool dev_forced = !forced.device.empty() || forced.ib_port > 0 || forced.gid_index >= 0;
  if (!cm && !dev_forced) return;
  const auto devices = read_rdma_devices(t.fs);
  if (cm) {
    obs.cm = cm_host(t.fs, devices, t.src.empty() ? local_address : t.src, !t.src.empty(),
                     local_address);
  } else {
    obs.user = user_selection(devices, forced, local_address);
  }
}

}  // namespace rdmacheck::conn
