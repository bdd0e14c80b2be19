// Who a client talks to and through what: the one target type of every
// command that talks to a peer (check, ping, bw, lat), declared once on the
// command line by cli/target_options.h. serve uses the device part only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "proto/messages.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::conn {

// -d / --ib-port / -x: what the user forced; empty or negative means "choose".
struct DeviceChoice {
  std::string device;  // "" = the device that routes to the peer (the first ACTIVE one)
  int ib_port = 0;     // 0 = the first ACTIVE port
  int gid_index = -1;  // -1 = the RoCE v2 GID of the address that routes to the peer
};

struct Target {
  // The machine this side reads facts and counters from ("/" live; a captured
  // tree in tests), as doctor gets it.
  FsRoot fs = FsRoot::none();
  std::string host;
  uint16_t tcp_port = proto::kDefaultPort;
  DeviceChoice dev;
  std::string src;  // --cm: the local address rdma_cm resolves from ("" = routing picks)
  // -T / -S: the priority the test's packets carry; the server's QP uses the same.
  int traffic_class = 0;  // 0..255 (int, not uint8_t: CLI11 would read "-T 3" as the character '3')
  int sl = 0;             // 0..15
  // bw/lat -T/--tos, as perftest's: the ToS of the rdma_cm id (--cm only); -1 = not set.
  int tos = -1;
  // --psk-file / RDMACHECK_PSK_FILE: the key this client proves to the server ("" = none).
  std::string psk_file;
  // --tls-cert, --tls-key, --tls-ca: certificate mode (mutual TLS) instead of a key.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  // -m: the largest path MTU both QPs may use, in bytes (256..4096); 0 = the
  // smaller of the two ports' active MTUs, which also caps it.
  int path_mtu = 0;
  // How long a connection waits for the server's greeting (connect_to_server
  // asks a silent listener twice). Tests shorten it.
  std::chrono::milliseconds greeting_wait{10000};
  // How long one TCP connect waits for the server's SYN-ACK (a timed-out one
  // is tried once more while the deadline allows). Tests shorten it.
  std::chrono::milliseconds connect_wait{5000};
};

}  // namespace rdmacheck::conn
