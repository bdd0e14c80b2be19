// One side of a test: device, port, GID and the verbs objects of one queue
// pair with its buffer, owned in creation order (destroyed in reverse).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "conn/target.h"
#include "proto/messages.h"
#include "verbs/cm.h"
#include "verbs/ibv.h"
#include "verbs/qp.h"

namespace rdmacheck::conn {

struct EndpointOptions {
  FsRoot fs = FsRoot::none();  // where this side's sysfs facts are read
  DeviceChoice dev;            // what the user forced (-d, --ib-port, -x), else chosen here
  std::string local_address;   // the source address towards the peer (from the TCP socket)
  std::string peer_address;    // the peer's address on that socket
  bool server = false;         // local_address is the one the client connected to
  std::string src;             // --cm: source address for rdma_resolve_addr ("" = let routing pick)
  proto::Transport transport = proto::Transport::kRc;
  size_t buffer_size = 4096;  // bytes for each direction
  int access = 0;             // remote access flags of the buffer
  uint32_t depth = 1;         // receive work requests kept posted
  uint32_t recv_slots = 1;    // receive half-size slots (UD ping keeps several receives posted)
  uint32_t inline_size = 0;   // largest message posted inline (bw/lat)
  uint8_t traffic_class = 0;  // GRH traffic class of our packets (-T)
  uint8_t sl = 0;             // service level (-S)
  int tos = -1;               // --cm: the rdma_cm id's ToS (-T/--tos); -1 = not set
};

struct AlignedFree {
  void operator()(char* p) const noexcept { std::free(p); }
};

struct Endpoint {
  // Declared in creation order: destruction runs bottom-up. With --cm the
  // connection manager's channel and id come first and go last.
  verbs::CmChannelPtr cm_channel;
  verbs::CmIdPtr cm_id;
  verbs::ContextPtr ctx;         // the device as we opened it (not with --cm)
  ibv_context* verbs = nullptr;  // where the resources live: ctx, or cm_id->verbs
  verbs::PdPtr pd;
  verbs::CompChannelPtr channel;
  verbs::CqPtr cq;
  // [send half | receive half x recv_slots], each region on its own pages (exposure.h)
  std::unique_ptr<char, AlignedFree> buffer;
  // One MR per region: the send half for this side's own access only, the
  // receive slots (what a peer may be told of) with the test's remote access,
  // at a random IOVA where the device takes one.
  verbs::MrPtr send_mr;
  verbs::MrPtr recv_mr;
  verbs::QpPtr qp;
  verbs::AhPtr ah;  // UD: the address of the peer

  FsRoot fs = FsRoot::none();
  std::string device;
  uint8_t port = 1;
  int gid_index = 0;
  ibv_gid gid{};
  std::string gid_type;
  std::string netdev;  // the netdev the GID belongs to (RoCE)
  ibv_port_attr port_attr{};
  size_t half = 0;            // size of each buffer half
  uint32_t recv_slots = 1;    // receive halves, side by side
  size_t recv_offset = 0;     // where the receive slots start in buffer (page-aligned)
  uint64_t recv_iova = 0;     // their address as the device, and a peer, names it
  int recv_access = 0;        // the remote access they were registered with
  std::string iova_note;      // why the receive region is at its virtual address ("" = it is not)
  uint8_t traffic_class = 0;  // asked for (EndpointOptions); the QP's own after RTR
  uint8_t sl = 0;
  int path_mtu = 0;  // bytes, as the QP reports it after RTR (RC, UC); 0 before or for UD
  std::vector<std::string> warnings;  // e.g. a forced GID that looks wrong
  std::string choice;                 // what was chosen and why (conn::explain_choice)
  std::string local_address;          // the route's source (or the address the client connected to)
  std::string peer_address;
  std::string forced;  // the -d/--ib-port/-x flags that forced the choice, "" = none
  uint32_t psn = 0;
  uint32_t qkey = 0;
  unsigned unacked_events = 0;

  [[nodiscard]] char* send_buf() const { return buffer.get(); }
  [[nodiscard]] char* recv_buf(uint32_t slot = 0) const {
    return buffer.get() + recv_offset + half * slot;
  }
  [[nodiscard]] std::string context() const;  // "rxe0 port 1 qpn 0x11"

  Endpoint() = default;
  Endpoint(Endpoint&&) noexcept = default;
  Endpoint& operator=(Endpoint&&) = delete;  // would free members in the wrong order
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;
  ~Endpoint();
};

// Bytes create_resources pins for a session with these options: the send half
// and the receive slots, each page-rounded.
size_t registered_bytes(const EndpointOptions& o);

// Opens the device, picks port and GID, creates PD/CQ/QP and the buffer, and
// moves the QP to INIT (recorded in timeline).
Result<Endpoint> open_endpoint(const EndpointOptions& o, std::vector<proto::Step>& timeline);

// Opens the device and picks port and GID only (for facts), no resources.
Result<Endpoint> open_device_only(const EndpointOptions& o);

// Port and GID on ep.verbs (device already chosen), and PD/CQ/buffer/MR/QP
// there. With cm_id, librdmacm creates the QP and drives its states (see
// cm_endpoint.h); otherwise the QP is moved to INIT here.
Status pick_port_and_gid(Endpoint& ep, const EndpointOptions& o, int port_hint);
Status create_resources(Endpoint& ep, const EndpointOptions& o, rdma_cm_id* cm_id,
                        std::vector<proto::Step>& timeline);

// Fills ep.choice and the addresses it names (after pick_port_and_gid):
// WHY is how the device was chosen (choose_device_port's or rdma_cm's).
void record_choice(Endpoint& ep, const EndpointOptions& o, const std::string& why);

// This process's locked-memory limit as it applies to pinning: RLIMIT_MEMLOCK's
// soft limit, nullopt when unlimited or lifted by CAP_IPC_LOCK (read from
// FS's /proc/self/status, as doctor reads it).
std::optional<uint64_t> effective_memlock_limit(const FsRoot& fs);

// Facts about this side for the handshake.
proto::HostFacts local_facts(const Endpoint& ep);
proto::QpInfo local_qp_info(const Endpoint& ep);

// What connect_qp's PEER_MTU should be: the peer's active MTU, lowered to
// ASKED (-m, bytes; 0 = not asked). connect_qp caps it by our own active MTU.
int path_mtu_limit(int peer_mtu, int asked);

// RTR + RTS against the peer (RC), or RTR + RTS and an address handle (UD).
Status connect_qp(Endpoint& ep, const proto::QpInfo& peer, int peer_mtu, const verbs::RcTiming& t,
                  std::vector<proto::Step>& timeline);

Status post_recv(Endpoint& ep, uint64_t wr_id, uint32_t len, uint32_t slot = 0);
// wr_id of the receive in slot i: kRecvWrId + i.
inline constexpr uint64_t kRecvWrId = 2;
// Receive slots of a UD ping, on both sides: with one, a late or duplicated
// datagram took the only receive, and the next one arriving before it was
// reposted was dropped by the device (the lab's netem duplicate 5 % showed one
// lost probe in a hundred on a path that lost nothing).
inline constexpr uint32_t kUdPingRecvSlots = 4;
// The receive slot a completion's wr_id names, or nullopt when it is no receive.
inline std::optional<uint32_t> recv_slot_of(const Endpoint& ep, uint64_t wr_id) {
  if (wr_id < kRecvWrId || wr_id >= kRecvWrId + ep.recv_slots) return std::nullopt;
  return static_cast<uint32_t>(wr_id - kRecvWrId);
}
// The server's first receives: depth of them, or one per slot when there are
// more slots, each of the largest message, spread over the slots.
Status post_receives(Endpoint& ep, uint32_t depth);
// Sends len bytes from the send half: SEND, or WRITE_WITH_IMM into the peer's buffer.
Status post_send(Endpoint& ep, uint64_t wr_id, uint32_t len, bool write_imm,
                 const proto::QpInfo& peer);

// Waits for the next completion until the deadline, sleeping on the completion
// channel (no busy loop: the emulated lab has one CPU per host). Also returns
// early with nullopt when extra_fd becomes readable (the control connection).
Result<std::optional<ibv_wc>> next_completion(Endpoint& ep, Deadline d, int extra_fd = -1);
// Takes one event off EP's completion channel (non-blocking; none waiting is
// not an error) and acknowledges events in batches, as libibverbs asks.
void take_cq_event(Endpoint& ep);

// Texts of completion statuses, with the meaning that matters for diagnosis.
std::string wc_status_text(ibv_wc_status s);

// A 24-bit PSN from a secure random source.
uint32_t random_psn();

// gid <-> sysfs text
std::string gid_text(const ibv_gid& g);
std::optional<ibv_gid> parse_gid(const std::string& text);

}  // namespace rdmacheck::conn
