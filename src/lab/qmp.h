// What a guest's QEMU holds of its NICs' virtio queues, read over QMP
// (x-query-virtio-queue-status, QEMU 7.2+). It tells a transmit stall's
// layer apart: frames the guest posted that QEMU has not taken (QEMU's side:
// its net backend or its queue handling), or none posted (the guest's
// kernel stopped before its NIC).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/result.h"
#include "lab/wire.h"

namespace rdmacheck::lab {

// The queues of one virtio-net device: receive and transmit.
struct NicQueues {
  VirtqStatus rx;
  VirtqStatus tx;
};

// The virtio-net devices of an x-query-virtio reply, in the order the guest
// names them (eth0 first: the order of "device[N]" in their QOM paths).
std::vector<std::string> virtio_net_paths(const nlohmann::json& reply);
// One x-query-virtio-queue-status reply's "return"; nullopt when malformed.
// Its avail is QEMU's shadow-avail-idx until the guest's own index is read.
std::optional<VirtqStatus> parse_queue_status(const nlohmann::json& reply);
// The avail ring's index (in guest memory, 2 bytes past "vring-avail") and
// the HMP command that reads it; the 16-bit value an "xp /1hx" reply shows
// ("000000000606b002: 0x8fd4"), nullopt when it shows none.
std::string avail_index_command(const nlohmann::json& reply);
std::optional<uint16_t> parse_xp_u16(const std::string& hmp_reply);
// Every virtio-net device's queues, asked over the QMP socket at PATH
// (one client at a time: QEMU serves the first).
Result<std::vector<NicQueues>> query_nic_queues(const std::string& path, Deadline deadline);

// Each port's transmit queue as its QEMU holds it (WireCounters::qemu_tx),
// asked at LAB_DIR/HOST.qmp within a second per host; a host whose QEMU
// does not answer keeps none.
void add_qemu_queues(std::vector<WireCounters>& wire, const std::string& lab_dir);

}  // namespace rdmacheck::lab
