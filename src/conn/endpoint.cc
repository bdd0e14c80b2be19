#include "conn/endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/version.h"
#include "conn/device_choice.h"
#include "conn/exposure.h"
#include "conn/timed_step.h"
#include "doctor/memlock.h"
#include "sysfs/fs_root.h"
#include "verbs/port_rate.h"

namespace rdmacheck::conn {
namespace {

using Micros = std::chrono::duration<double, std::micro>;

constexpr int kCqDepth = 4096;

// Each half: the test's largest message, and UD's 40-byte GRH in front of it.
size_t half_bytes(const EndpointOptions& o) {
  return std::max<size_t>(o.buffer_size + (o.transport == proto::Transport::kUd ? 40 : 0), 64);
}

size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

template <typename T>
T random_value(T fallback) {
  T v{};
  return getrandom(&v, sizeof v, 0) == sizeof v ? v : fallback;
}

// The receive slots' MR. With remote access it goes to a random IOVA where
// the device takes one (exposure.h); where ibv_reg_mr_iova is refused, the
// region is registered at its virtual address and ep.iova_note says why.
Result<verbs::MrPtr> reg_recv_region(Endpoint& ep, size_t len, int remote_access) {
  const int access = IBV_ACCESS_LOCAL_WRITE | remote_access;
  ep.recv_access = remote_access;
  ep.recv_iova = reinterpret_cast<uintptr_t>(ep.recv_buf());
  if (!exposes_region(remote_access)) return verbs::reg_mr(ep.pd.get(), ep.recv_buf(), len, access);
  const uint64_t iova = iova_from_random(random_value<uint64_t>(::getpid()), page_size());
  auto mr = verbs::reg_mr_iova(ep.pd.get(), ep.recv_buf(), len, iova, access);
  if (mr) {
    ep.recv_iova = iova;
    return mr;
  }
  ep.iova_note = "receive region at its virtual address: " + mr.error().message();
  return verbs::reg_mr(ep.pd.get(), ep.recv_buf(), len, access);
}

GidType gid_type_of(uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_IB:
      return GidType::kIb;
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    case IBV_GID_TYPE_ROCE_V2:
      return GidType::kRoceV2;
    default:
      return GidType::kUnknown;
  }
}

// Every valid GID of every port of the device, in one call.
Result<std::vector<ibv_gid_entry>> all_gids(ibv_context* ctx) {
  ibv_device_attr da{};
  if (int rc = ibv_query_device(ctx, &da); rc != 0) {
    return code_error("ibv_query_device", rc, ibv_get_device_name(ctx->device));
  }
  size_t slots = 0;
  for (int p = 1; p <= da.phys_port_cnt; ++p) {
    if (auto attr = verbs::query_port(ctx, static_cast<uint8_t>(p))) {
      slots += static_cast<size_t>(attr->gid_tbl_len);
    }
  }
  return verbs::query_gid_table(ctx, slots);
}

GidCandidate gid_candidate(const ibv_gid_entry& e) {
  GidCandidate c{static_cast<int>(e.gid_index), {}, gid_type_of(e.gid_type)};
  std::copy(std::begin(e.gid.raw), std::end(e.gid.raw), c.raw.begin());
  return c;
}

// What the device reports, for choose_device_port (device_choice.h).
Result<DeviceCandidate> candidate_of(ibv_context* ctx) {
  DeviceCandidate c{ibv_get_device_name(ctx->device), {}};
  ibv_device_attr da{};
  if (int rc = ibv_query_device(ctx, &da); rc != 0)
    return code_error("ibv_query_device", rc, c.name);
  auto gids = all_gids(ctx);
  for (int p = 1; p <= da.phys_port_cnt; ++p) {
    auto attr = verbs::query_port(ctx, static_cast<uint8_t>(p));
    PortCandidate port{p, attr && attr->state == IBV_PORT_ACTIVE, {}};
    for (const auto& e : gids ? *gids : std::vector<ibv_gid_entry>{}) {
      if (static_cast<int>(e.port_num) == p) port.gids.push_back(gid_candidate(e));
    }
    c.ports.push_back(std::move(port));
  }
  return c;
}

// The port's GID table as the device reports it, then choose_gid.
Status pick_gid(Endpoint& ep, const EndpointOptions& o) {
  auto table = all_gids(ep.verbs);
  if (!table) return table.error();
  std::vector<GidCandidate> gids;
  std::vector<ibv_gid_entry> entries;
  for (const auto& e : *table) {
    if (e.port_num != ep.port) continue;
    gids.push_back(gid_candidate(e));
    entries.push_back(e);
  }
  auto choice =
      choose_gid(gids, ep.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET, o.dev.gid_index,
                 o.local_address, fmt::format("{} port {}", ep.device, ep.port));
  if (!choice) return choice.error();
  ep.warnings.insert(ep.warnings.end(), choice->warnings.begin(), choice->warnings.end());
  const ibv_gid_entry& chosen = entries[static_cast<size_t>(
      std::find_if(gids.begin(), gids.end(),
                   [&](const GidCandidate& g) { return g.index == choice->index; }) -
      gids.begin())];
  ep.gid_index = choice->index;
  ep.gid = chosen.gid;
  ep.gid_type = gid_type_name(gid_type_of(chosen.gid_type));
  char name[IF_NAMESIZE] = {};
  if (chosen.ndev_ifindex != 0 && if_indextoname(chosen.ndev_ifindex, name) != nullptr) {
    ep.netdev = name;
  }
  return ok_status();
}

}  // namespace

Endpoint::~Endpoint() {
  if (cq && unacked_events > 0) ibv_ack_cq_events(cq.get(), unacked_events);
  if (cm_id && cm_id->qp != nullptr) {
    // A librdmacm QP is destroyed through its id, which forgets it.
    (void)qp.release();
    rdma_destroy_qp(cm_id.get());
  }
}

std::string Endpoint::context() const {
  return qp ? verbs::qp_context(qp.get(), port) : fmt::format("{} port {}", device, port);
}

std::string gid_text(const ibv_gid& g) {
  std::string s;
  for (int i = 0; i < 16; i += 2) {
    if (i != 0) s += ':';
    s += fmt::format("{:02x}{:02x}", g.raw[i], g.raw[i + 1]);
  }
  return s;
}

std::optional<ibv_gid> parse_gid(const std::string& text) {
  if (!proto::valid_gid_text(text)) return std::nullopt;
  ibv_gid g{};
  std::string hex;
  for (char c : text) {
    if (c != ':') hex.push_back(c);
  }
  for (size_t i = 0; i < 16; ++i) {
    g.raw[i] = static_cast<uint8_t>(std::stoul(hex.substr(i * 2, 2), nullptr, 16));
  }
  return g;
}

size_t registered_bytes(const EndpointOptions& o) {
  return buffer_layout(half_bytes(o), o.recv_slots, page_size()).total;
}

uint32_t random_psn() {
  return random_value<uint32_t>(static_cast<uint32_t>(::getpid()) * 2654435761u) & 0xffffff;
}

// Port and GID on ep.verbs (device already chosen).
Status pick_port_and_gid(Endpoint& ep, const EndpointOptions& o, int port_hint) {
  ep.fs = o.fs;
  ep.traffic_class = o.traffic_class;
  ep.sl = o.sl;
  ep.device = ibv_get_device_name(ep.verbs->device);
  auto dev = candidate_of(ep.verbs);
  if (!dev) return dev.error();
  DeviceChoice forced = o.dev;
  forced.device = ep.device;
  forced.ib_port = port_hint;
  auto chosen = choose_device_port({*dev}, forced);
  if (!chosen) return chosen.error();
  ep.port = static_cast<uint8_t>(chosen->port);
  auto pattr = verbs::query_port(ep.verbs, ep.port);
  if (!pattr) return pattr.error();
  ep.port_attr = *pattr;
  return pick_gid(ep, o);
}

// PD, CQ, buffer, MR and QP on ep.verbs. With cm_id, librdmacm creates the QP
// and drives its states; otherwise the QP is moved to INIT here.
Status create_resources(Endpoint& ep, const EndpointOptions& o, rdma_cm_id* cm_id,
                        std::vector<proto::Step>& timeline) {
  auto pd = verbs::alloc_pd(ep.verbs);
  if (!pd) return pd.error();
  ep.pd = std::move(*pd);
  auto ch = verbs::create_comp_channel(ep.verbs);
  if (!ch) return ch.error();
  ep.channel = std::move(*ch);
  ::fcntl(ep.channel->fd, F_SETFL, ::fcntl(ep.channel->fd, F_GETFL) | O_NONBLOCK);
  auto cq = verbs::create_cq(ep.verbs, kCqDepth, ep.channel.get());
  if (!cq) return cq.error();
  ep.cq = std::move(*cq);

  const bool ud = o.transport == proto::Transport::kUd;
  ep.half = half_bytes(o);
  ep.recv_slots = std::max<uint32_t>(o.recv_slots, 1);
  const BufferLayout layout = buffer_layout(ep.half, ep.recv_slots, page_size());
  ep.recv_offset = layout.recv_offset;
  ep.buffer.reset(static_cast<char*>(std::aligned_alloc(page_size(), layout.total)));
  if (!ep.buffer) return code_error("aligned_alloc", ENOMEM, fmt::format("{} bytes", layout.total));
  std::memset(ep.buffer.get(), 0, layout.total);
  // Reads and atomics land in the send half: local write, nothing remote.
  auto smr = verbs::reg_mr(ep.pd.get(), ep.send_buf(), layout.send_bytes, IBV_ACCESS_LOCAL_WRITE);
  if (!smr) return smr.error();
  ep.send_mr = std::move(*smr);
  auto rmr = reg_recv_region(ep, layout.recv_bytes, o.access);
  if (!rmr) return rmr.error();
  ep.recv_mr = std::move(*rmr);

  ibv_qp_init_attr init{};
  init.send_cq = ep.cq.get();
  init.recv_cq = ep.cq.get();
  init.qp_type = ud ? IBV_QPT_UD : (o.transport == proto::Transport::kUc ? IBV_QPT_UC : IBV_QPT_RC);
  init.cap.max_send_wr = std::max<uint32_t>(o.depth, 16);
  init.cap.max_recv_wr = std::max<uint32_t>(o.depth, 16);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = o.inline_size;
  ep.psn = random_psn();
  // UD: a Q_Key of this session's own, told only to its peer in the
  // handshake, so that no one else who learns the QPN can make us echo.
  ep.qkey = qkey_from_random(random_value<uint32_t>(ep.psn));
  if (cm_id != nullptr) {
    if (rdma_create_qp(cm_id, ep.pd.get(), &init) != 0) {
      return errno_error("rdma_create_qp", ep.device);
    }
    ep.qp.reset(cm_id->qp);
    return ok_status();
  }
  auto qp = verbs::create_qp(ep.pd.get(), init);
  if (!qp) return qp.error();
  ep.qp = std::move(*qp);
  return timed_step(timeline, "INIT", [&] {
    return ud ? verbs::ud_to_init(ep.qp.get(), ep.port, ep.qkey)
              : verbs::to_init(ep.qp.get(), ep.port, o.access);
  });
}

Result<Endpoint> open_device_only(const EndpointOptions& o) {
  auto list = verbs::DeviceList::get();
  if (!list) return list.error();
  std::vector<DeviceCandidate> devices;
  for (ibv_device* d : list->devices()) {
    auto ctx = verbs::open_device(d);
    if (!ctx) continue;
    if (auto c = candidate_of(ctx->get())) devices.push_back(std::move(*c));
  }
  auto chosen = choose_device_port(devices, o.dev, o.local_address);
  if (!chosen) return chosen.error();
  ibv_device* dev = list->find(chosen->device);
  if (dev == nullptr)
    return plain_error("device", fmt::format("no RDMA device named '{}'", chosen->device));
  Endpoint ep;
  auto ctx = verbs::open_device(dev);
  if (!ctx) return ctx.error();
  ep.ctx = std::move(*ctx);
  ep.verbs = ep.ctx.get();
  if (auto s = pick_port_and_gid(ep, o, chosen->port); !s) return s.error();
  record_choice(ep, o, chosen->why);
  return ep;
}

void record_choice(Endpoint& ep, const EndpointOptions& o, const std::string& why) {
  ep.local_address = o.local_address;
  ep.peer_address = o.peer_address;
  ep.forced = forced_flags(o.dev);
  ep.choice = explain_choice(ChoiceStory{.server = o.server,
                                         .peer_address = o.peer_address,
                                         .local_address = o.local_address,
                                         .netdev = ep.netdev,
                                         .device = ep.device,
                                         .port = ep.port,
                                         .gid_index = ep.gid_index,
                                         .gid_type = ep.gid_type,
                                         .device_why = why,
                                         .forced = ep.forced});
}

Result<Endpoint> open_endpoint(const EndpointOptions& o, std::vector<proto::Step>& timeline) {
  auto ep = open_device_only(o);
  if (!ep) return ep;
  if (auto s = create_resources(*ep, o, nullptr, timeline); !s) return s.error();
  return ep;
}

proto::HostFacts local_facts(const Endpoint& ep) {
  proto::HostFacts f;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  f.hostname = host;
  f.version = kVersionString;
  f.device = ep.device;
  f.port = ep.port;
  f.gid_index = ep.gid_index;
  f.gid = gid_text(ep.gid);
  f.gid_type = ep.gid_type;
  f.active_mtu = verbs::mtu_bytes(ep.port_attr.active_mtu);
  f.rate_gbps = verbs::port_rate_gbps(ep.port_attr);
  f.netdev = ep.netdev;
  f.traffic_class = ep.traffic_class;
  f.path_mtu = ep.path_mtu;
  f.sl = ep.sl;
  f.choice = ep.choice;
  f.local_address = ep.local_address;
  f.peer_address = ep.peer_address;
  f.forced = ep.forced;
  if (!ep.netdev.empty()) {
    f.netdev_mtu =
        std::atoi(ep.fs.read_line("/sys/class/net/" + ep.netdev + "/mtu").value_or("0").c_str());
  }
  return f;
}

std::optional<uint64_t> effective_memlock_limit(const FsRoot& fs) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const auto text = fs.read("/proc/self/status");
  if (text && doctor::has_ipc_lock(*text).value_or(false)) return std::nullopt;
  return static_cast<uint64_t>(rl.rlim_cur);
}

}  // namespace rdmacheck::conn
