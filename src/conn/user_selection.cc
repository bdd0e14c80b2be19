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
  auto g = choose_gid(gid_candidates(*p), p->link_layer == "Ethernet", choice.gid_index,
                      local_address, fmt::format("{} port {}", d->name, p->port));
  if (!g) return std::nullopt;
  auto e = std::find_if(p->gids.begin(), p->gids.end(),
                        [&](const GidEntry& i) { return i.index == g->index; });
  if (e == p->gids.end()) return std::nullopt;
  return Selection{.device = d->name,
                   .port = p->port,
                   .port_state = p->state_name,
                   .gid_index = e->index,
                   .gid = e->gid,
                   .gid_type = gid_type_name(e->type),
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

CmHost cm_host(const FsRoot& fs, const std::vector<DeviceInfo>& devices,
               const std::string& source) {
  CmHost h;
  h.used = true;
  h.dev_node = fs.exists("/dev/infiniband/rdma_cm");
  h.ucm_loaded = fs.exists("/sys/module/rdma_ucm");
  h.cm_loaded = fs.exists("/sys/module/rdma_cm");
  h.source = source;
  const std::string want = address_gid_text(source);
  if (want.empty()) return h;
  h.source_rdma = std::any_of(devices.begin(), devices.end(), [&](const DeviceInfo& d) {
    return std::any_of(d.ports.begin(), d.ports.end(), [&](const PortInfo& p) {
      return std::any_of(p.gids.begin(), p.gids.end(),
                         [&](const GidEntry& g) { return g.gid == want; });
    });
  });
  return h;
}

}  // namespace rdmacheck::conn
